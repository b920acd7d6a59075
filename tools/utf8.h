/* SPDX-License-Identifier: MIT */
/*
 * UTF-8 as JSON's writers (json.c, the preload watcher's reports) take
 * it: a path is bytes, JSON text is Unicode.
 */
#ifndef NCB_UTF8_H
#define NCB_UTF8_H

/*
 * The well-formed UTF-8 sequence at s (Unicode table 3-7: no overlong
 * form, no surrogate, nothing above U+10FFFF): its length; or, negated,
 * that of the maximal subpart of a sequence cut short, which stands for
 * one U+FFFD (Unicode's recommended practice, Python's and browsers').
 * Stops at the first byte out of place, so never reads past a NUL.
 */
static inline int utf8_len(const unsigned char *s)
{
	unsigned char lo = 0x80, hi = 0xbf;
	int n, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return -1;
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return -1;
	for (i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return -i;
	return n;
}

#endif
