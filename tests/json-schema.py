#!/usr/bin/env python3
"""Checks JSON documents against the schemas written in noclobber(1).

usage: json-schema.py MANPAGE NAME [FILE]

The man page's block between the comments 'schema begin' and 'schema end'
defines each document, a definition per 'name = type' (a type may go on
over lines):

  type  = alt ('|' alt)*            one of
  alt   = term ('+' term)*          objects merged
  term  = '{' [field (',' field)*] '}' | '[' type ']' | '"text"' | NUMBER
        | true | false | str | int | num | hex | bool | null | NAME
  field = KEY ['?'] ':' type        '?': the key may be absent; a KEY
                                    with a '-' is quoted

An object has exactly its keys (those marked '?' may be missing), each
once, in any order, but a document begins with "version"; hex is a
string "0x" and lowercase hexadecimal digits.  Each line
of FILE (default: standard input) is one document checked against NAME;
the exit status is 0 if all are, 1 with the first difference said.
"""
import json
import re
import sys

TOKEN = re.compile(r'\s*(?:("(?:[^"\\]|\\.)*")|(-?\d+)|([A-Za-z_]\w*)|(.))')


def roff_text(path):
    """The schema block of the man page, its roff escapes undone."""
    text, on = [], False
    for line in open(path, encoding="utf-8"):
        if re.match(r'\.\\"\s*schema begin', line):
            on = True
        elif re.match(r'\.\\"\s*schema end', line):
            on = False
        elif on and not line.startswith("."):
            text.append(line.replace(r"\(dq", '"').replace(r"\-", "-")
                        .replace(r"\e", "\\").replace(r"\&", ""))
    if not text:
        raise SystemExit("%s: no schema block" % path)
    return "".join(text)


def tokens(s):
    out = []
    for m in TOKEN.finditer(s):
        if m.group(0).strip():
            out.append(next(g for g in m.groups() if g is not None))
    return out


class Parser:
    def __init__(self, toks):
        self.t, self.i = toks, 0

    def peek(self):
        return self.t[self.i] if self.i < len(self.t) else None

    def take(self, want=None):
        tok = self.peek()
        if tok is None or (want is not None and tok != want):
            raise SyntaxError("schema: expected %r, found %r near token %d"
                              % (want, tok, self.i))
        self.i += 1
        return tok

    def type(self):
        alts = [self.alt()]
        while self.peek() == "|":
            self.take()
            alts.append(self.alt())
        return ("one", alts) if len(alts) > 1 else alts[0]

    def alt(self):
        terms = [self.term()]
        while self.peek() == "+":
            self.take()
            terms.append(self.term())
        return ("merge", terms) if len(terms) > 1 else terms[0]

    def term(self):
        tok = self.take()
        if tok == "{":
            fields = {}
            while self.peek() != "}":
                key = self.take()
                if key.startswith('"'):
                    key = json.loads(key)
                optional = self.peek() == "?"
                if optional:
                    self.take()
                self.take(":")
                fields[key] = (optional, self.type())
                if self.peek() == ",":
                    self.take()
            self.take("}")
            return ("object", fields)
        if tok == "[":
            item = self.type()
            self.take("]")
            return ("array", item)
        if tok.startswith('"'):
            return ("literal", json.loads(tok))
        if re.fullmatch(r"-?\d+", tok):
            return ("literal", int(tok))
        if tok in ("true", "false"):
            return ("literal", tok == "true")
        return ("name", tok)


def parse(text):
    """{name: type} from 'name = type' definitions."""
    defs = {}
    for chunk in re.split(r"\n(?=[A-Za-z_]\w*\s*=)", "\n" + text):
        if not chunk.strip():
            continue
        name, _, body = chunk.partition("=")
        p = Parser(tokens(body))
        defs[name.strip()] = p.type()
        if p.peek() is not None:
            raise SyntaxError("schema %s: trailing %r" % (name, p.peek()))
    return defs


BASIC = {
    "str": lambda v: isinstance(v, str),
    "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "num": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "hex": lambda v: isinstance(v, str) and
    re.fullmatch(r"0x[0-9a-f]+", v) is not None,
    "bool": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def fields_of(t, defs):
    """The fields of an object type (merged ones too), or None."""
    if t[0] == "name" and t[1] in defs:
        return fields_of(defs[t[1]], defs)
    if t[0] == "object":
        return dict(t[1])
    if t[0] == "merge":
        out = {}
        for part in t[1]:
            f = fields_of(part, defs)
            if f is None:
                return None
            out.update(f)
        return out
    return None


def check(v, t, defs, where):
    """None if v is of type t, else what differs."""
    kind, arg = t
    if kind == "name":
        if arg in BASIC:
            return None if BASIC[arg](v) else "%s: %r is no %s" % (
                where, v, arg)
        if arg not in defs:
            return "schema names %r, which it does not define" % arg
        return check(v, defs[arg], defs, where)
    if kind == "literal":
        same = v == arg and type(v) is type(arg)
        return None if same else "%s: %r, not %r" % (where, v, arg)
    if kind == "one":
        why = [check(v, a, defs, where) for a in arg]
        if None in why:
            return None
        return " / ".join(why)
    if kind == "array":
        if not isinstance(v, list):
            return "%s: %r is no array" % (where, v)
        for i, x in enumerate(v):
            why = check(x, arg, defs, "%s[%d]" % (where, i))
            if why:
                return why
        return None
    fields = fields_of(t, defs)
    if not isinstance(v, dict):
        return "%s: %r is no object" % (where, v)
    extra = set(v) - set(fields)
    if extra:
        return "%s: keys not in the schema: %s" % (where, sorted(extra))
    for key, (optional, ft) in fields.items():
        if key not in v:
            if not optional:
                return "%s: no key %r" % (where, key)
            continue
        why = check(v[key], ft, defs, "%s.%s" % (where, key))
        if why:
            return why
    return None


def no_duplicates(pairs):
    """An object's members, refusing a key given twice."""
    keys = [k for k, _ in pairs]
    dup = {k for k in keys if keys.count(k) > 1}
    if dup:
        raise ValueError("keys given twice: %s" % sorted(dup))
    return dict(pairs)


def main():
    if len(sys.argv) not in (3, 4):
        raise SystemExit(__doc__.split("\n\n")[1])
    defs = parse(roff_text(sys.argv[1]))
    name = sys.argv[2]
    if name not in defs:
        raise SystemExit("no schema %r in %s" % (name, sys.argv[1]))
    src = open(sys.argv[3], encoding="utf-8") if len(sys.argv) == 4 \
        else sys.stdin
    n = 0
    for n, line in enumerate(src, 1):
        try:
            doc = json.loads(line, object_pairs_hook=no_duplicates)
        except ValueError as e:
            print("line %d: not JSON: %s" % (n, e))
            return 1
        if not isinstance(doc, dict) or next(iter(doc), None) != "version":
            print("line %d: \"version\" is not the first member" % n)
            return 1
        why = check(doc, ("name", name), defs, name)
        if why:
            print("line %d: %s" % (n, why))
            return 1
    if n == 0:
        print("no document")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
