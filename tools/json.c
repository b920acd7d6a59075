/* SPDX-License-Identifier: MIT */
/*
 * The tool's JSON.  Every document is one object that begins with
 * "version": the document format's version, raised when a key changes
 * meaning or goes away (new keys may come in any version).  Addresses,
 * lengths and offsets are hex strings: a 57-bit address is more than a
 * JSON number holds exactly in most parsers (doubles).  A document is
 * written to memory and printed whole, so that a failure half-way
 * prints an error document, never half of another.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "utf8.h"

static int utf8_valid(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	int n;

	for (; *p; p += n)
		if ((n = utf8_len(p)) < 0)
			return 0;
	return 1;
}

/*
 * One ASCII character in a JSON string: the short escapes where JSON has
 * them, \u00XX for the other control characters.
 */
static void json_ascii(FILE *f, unsigned char c)
{
	switch (c) {
	case '"':
	case '\\':
		fprintf(f, "\\%c", c);
		break;
	case '\b':
		fputs("\\b", f);
		break;
	case '\f':
		fputs("\\f", f);
		break;
	case '\n':
		fputs("\\n", f);
		break;
	case '\r':
		fputs("\\r", f);
		break;
	case '\t':
		fputs("\\t", f);
		break;
	default:
		if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
}

/*
 * JSON text is Unicode; a path is bytes.  Valid UTF-8 passes through, and
 * what is not becomes U+FFFD: the output is valid UTF-8 that every JSON
 * parser takes.  What that loses, json_mapping gives back whole in
 * "path_hex".  (Python's surrogateescape, U+DC80 + byte, would keep one
 * lossless string, but a lone surrogate is no Unicode scalar value:
 * strict parsers refuse it, others replace it.)
 */
static void json_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	int n;

	fputc('"', f);
	for (; *p; p += n) {
		n = utf8_len(p);
		if (n < 0) {
			fputs("\\ufffd", f);
			n = -n;
		} else if (n > 1) {
			fwrite(p, 1, (size_t)n, f);
		} else {
			json_ascii(f, *p);
		}
	}
	fputc('"', f);
}

/*
 * "KEY": the path, and "KEY_hex": its bytes if it is not UTF-8 (KEY is
 * a short name of ours).
 */
static void json_named_path(FILE *f, const char *key, const char *path)
{
	const unsigned char *p = (const unsigned char *)path;

	fprintf(f, "\"%s\":", key);
	json_string(f, path);
	if (utf8_valid(path))
		return;
	fprintf(f, ",\"%s_hex\":\"", key);
	for (; *p; p++)
		fprintf(f, "%02x", *p);
	fputc('"', f);
}

/* The error object: errno's name and number, and what it means here. */
static void json_error(FILE *f, int err, const char *message)
{
	const char *name = err ? strerrorname_np(err) : NULL;

	fputs("{\"errno\":", f);
	json_string(f, name ? name : "?");
	fprintf(f, ",\"code\":%d,\"message\":", err);
	json_string(f, message ? message : strerror(err));
	fputc('}', f);
}

int jw_begin(struct jw *w)
{
	memset(w, 0, sizeof(*w));
	w->f = open_memstream(&w->buf, &w->len);
	if (!w->f)
		return -errno;
	fputs("{\"version\":1", w->f);
	w->more = 1;
	return 0;
}

/* The comma before a member, and its key inside an object. */
void jw_key(struct jw *w, const char *key)
{
	if (w->more >> w->depth & 1)
		fputc(',', w->f);
	w->more |= 1ULL << w->depth;
	if (key)
		fprintf(w->f, "\"%s\":", key);
}

void jw_open(struct jw *w, const char *key, char brace)
{
	jw_key(w, key);
	fputc(brace, w->f);
	w->depth++;
	w->more &= ~(1ULL << w->depth);
}

void jw_close(struct jw *w, char brace)
{
	fputc(brace, w->f);
	w->depth--;
}

void jw_str(struct jw *w, const char *key, const char *s)
{
	jw_key(w, key);
	if (s)
		json_string(w->f, s);
	else
		fputs("null", w->f);
}

void jw_hex(struct jw *w, const char *key, uint64_t v)
{
	jw_key(w, key);
	fprintf(w->f, "\"0x%" PRIx64 "\"", v);
}

void jw_int(struct jw *w, const char *key, long long v)
{
	jw_key(w, key);
	fprintf(w->f, "%lld", v);
}

void jw_uint(struct jw *w, const char *key, unsigned long long v)
{
	jw_key(w, key);
	fprintf(w->f, "%llu", v);
}

/* Seconds, to the microsecond. */
void jw_seconds(struct jw *w, const char *key, double v)
{
	jw_key(w, key);
	fprintf(w->f, "%.6f", v);
}

void jw_bool(struct jw *w, const char *key, int v)
{
	jw_key(w, key);
	fputs(v ? "true" : "false", w->f);
}

void jw_null(struct jw *w, const char *key)
{
	jw_key(w, key);
	fputs("null", w->f);
}

/* An error object, or null for err 0; message NULL: strerror's. */
void jw_error(struct jw *w, const char *key, int err, const char *message)
{
	jw_key(w, key);
	if (err)
		json_error(w->f, err, message);
	else
		fputs("null", w->f);
}

void jw_path(struct jw *w, const char *path)
{
	jw_named_path(w, "path", path);
}

void jw_named_path(struct jw *w, const char *key, const char *path)
{
	jw_key(w, NULL);
	json_named_path(w->f, key, path);
}

/*
 * The document, closed and printed whole on one line, with one write
 * where it fits stdio's buffer; -errno if it could not be made (no
 * memory) or printed.  What a full device took of it stays written.
 */
int jw_end(struct jw *w, FILE *out)
{
	int err = 0;

	fputc('}', w->f);
	errno = 0;
	if (fclose(w->f))
		err = -(errno ? errno : ENOMEM);
	else if (fwrite(w->buf, 1, w->len, out) != w->len ||
		 fputc('\n', out) == EOF || fflush(out))
		err = -(errno ? errno : EIO);
	free(w->buf);
	memset(w, 0, sizeof(*w));
	return err;
}

/* A document that will not be printed: a failure came first. */
void jw_drop(struct jw *w)
{
	fclose(w->f);
	free(w->buf);
	memset(w, 0, sizeof(*w));
}

/* A command's failure as a whole: {"version":1,"error":{...}}. */
void jw_fail(FILE *out, int err, const char *message)
{
	struct jw w;

	if (jw_begin(&w))
		return;
	jw_error(&w, "error", err, message);
	jw_end(&w, out);
}

int print_failed;

/* A document that could not be printed (-errno): said once. */
void print_error(const char *cmd, int err)
{
	if (print_failed++)
		return;
	fprintf(stderr, "noclobber%s%s: cannot write the output: %s\n",
		cmd ? " " : "", cmd ? cmd : "", strerror(-err));
}
