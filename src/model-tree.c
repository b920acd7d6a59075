/* SPDX-License-Identifier: MIT */
/*
 * The model's B+ tree.  Leaves hold up to LEAF_MAX areas in address order
 * and are chained both ways; inner nodes hold, for each child, the first
 * start address below it (to steer look-ups) and the largest gap below it
 * (to steer gap searches).  The gap of an area is the free space between
 * the previous area's end and its start; for the first area of a leaf the
 * previous area is the last one of the leaf before.
 *
 * Every change ends with fix_up() on each node whose contents changed: it
 * rewrites the node's key and gap in its parent and climbs while they
 * differ, so a change costs one walk up, not a walk per changed gap.
 * Nodes other than the root stay at least half full (borrow or merge on
 * deletion); appending at the far right leaves LEAF_FILL areas behind,
 * so that areas loaded in order fill their leaves to three quarters: full
 * leaves would split on the first insertion anywhere.
 */
#include <stdlib.h>
#include <string.h>
#include "model.h"

#define LEAF_MAX 16
#define LEAF_MIN (LEAF_MAX / 2)
#define LEAF_FILL (LEAF_MAX * 3 / 4)
#define INNER_MAX 16
#define INNER_MIN (INNER_MAX / 2)

struct mt_node {
	struct mt_inner *parent;
	uint16_t n;
	uint16_t leaf;
};

struct mt_leaf {
	struct mt_node h;
	struct mt_leaf *prev;
	struct mt_leaf *next;
	struct area a[LEAF_MAX];
};

struct mt_inner {
	struct mt_node h;
	uint64_t key[INNER_MAX];
	uint64_t gap[INNER_MAX];
	struct mt_node *child[INNER_MAX];
};

#define LEAF(nd) ((struct mt_leaf *)(nd))
#define INNER(nd) ((struct mt_inner *)(nd))

static struct mt_node *node_new(struct mtree *t, int leaf)
{
	size_t size = leaf ? sizeof(struct mt_leaf) : sizeof(struct mt_inner);
	struct mt_node *nd = calloc(1, size);

	if (!nd)
		return NULL;
	nd->leaf = (uint16_t)leaf;
	t->bytes += size;
	return nd;
}

static void node_free(struct mtree *t, struct mt_node *nd)
{
	t->bytes -= nd->leaf ? sizeof(struct mt_leaf)
			     : sizeof(struct mt_inner);
	free(nd);
}

int ncb__mt_init(struct mtree *t)
{
	memset(t, 0, sizeof(*t));
	t->root = node_new(t, 1);
	return t->root ? 0 : -ENOMEM;
}

static void destroy(struct mtree *t, struct mt_node *nd)
{
	unsigned int i;

	if (!nd->leaf)
		for (i = 0; i < nd->n; i++)
			destroy(t, INNER(nd)->child[i]);
	node_free(t, nd);
}

void ncb__mt_destroy(struct mtree *t)
{
	if (t->root)
		destroy(t, t->root);
	t->root = NULL;
	t->count = 0;
}

/* The end of the area before entry i of leaf l; 0 if there is none. */
static uint64_t prev_end(const struct mt_leaf *l, unsigned int i)
{
	const struct mt_leaf *p = l->prev;

	if (i)
		return l->a[i - 1].end;
	/* A leaf is empty only while it is being merged away. */
	while (p && !p->h.n)
		p = p->prev;
	return p ? p->a[p->h.n - 1].end : 0;
}

static uint64_t node_gap(const struct mt_node *nd)
{
	uint64_t m = 0, prev;
	unsigned int i;

	if (!nd->leaf) {
		for (i = 0; i < nd->n; i++)
			m = INNER(nd)->gap[i] > m ? INNER(nd)->gap[i] : m;
		return m;
	}
	prev = nd->n ? prev_end(LEAF(nd), 0) : 0;
	for (i = 0; i < nd->n; i++) {
		const struct area *a = &LEAF(nd)->a[i];

		m = a->start - prev > m ? a->start - prev : m;
		prev = a->end;
	}
	return m;
}

static uint64_t node_key(const struct mt_node *nd)
{
	return nd->leaf ? LEAF(nd)->a[0].start : INNER(nd)->key[0];
}

static unsigned int slot_of(const struct mt_inner *p,
			    const struct mt_node *nd)
{
	unsigned int i = 0;

	while (p->child[i] != nd)
		i++;
	return i;
}

/* nd's contents changed: carry its key and largest gap up the tree. */
static void fix_up(struct mt_node *nd)
{
	struct mt_inner *p;
	unsigned int i;
	uint64_t g, k;

	for (; (p = nd->parent); nd = &p->h) {
		i = slot_of(p, nd);
		g = node_gap(nd);
		k = nd->n ? node_key(nd) : p->key[i];
		if (p->gap[i] == g && p->key[i] == k)
			return;
		p->gap[i] = g;
		p->key[i] = k;
	}
}

/*
 * One gap of leaf l became smaller than old, or grew to g: the largest
 * gap the parent keeps for l changes only if old was it, or g passes it,
 * so most changes need no scan of the leaf.
 */
static void gap_shrank(struct mt_leaf *l, uint64_t old)
{
	struct mt_inner *p = l->h.parent;

	if (p && old >= p->gap[slot_of(p, &l->h)])
		fix_up(&l->h);
}

static void gap_grew(struct mt_leaf *l, uint64_t g)
{
	struct mt_inner *p = l->h.parent;

	if (p && g > p->gap[slot_of(p, &l->h)])
		fix_up(&l->h);
}

/* The leaf where addr sorts: the last whose first start is <= addr. */
static struct mt_leaf *descend(const struct mtree *t, uint64_t addr)
{
	const struct mt_node *nd = t->root;
	const struct mt_inner *in;
	unsigned int i, k;

	while (!nd->leaf) {
		in = INNER(nd);
		/* Keys are sorted: counting them is a branch-free search. */
		for (i = 1, k = 0; i < in->h.n; i++)
			k += in->key[i] <= addr;
		nd = in->child[k];
	}
	return LEAF(nd);
}

struct area *ncb__mt_at(const struct mt_cur *c)
{
	return c->leaf && c->i < c->leaf->h.n ? &c->leaf->a[c->i] : NULL;
}

struct area *ncb__mt_find(const struct mtree *t, uint64_t addr,
			  struct mt_cur *c)
{
	struct mt_leaf *l = descend(t, addr);
	unsigned int i, k = 0;

	for (i = 0; i < l->h.n; i++)
		k += l->a[i].end <= addr;
	i = k;
	/* Areas are disjoint: the next leaf's first area ends above. */
	if (i == l->h.n && l->next) {
		l = l->next;
		i = 0;
	}
	c->leaf = l;
	c->i = i;
	return ncb__mt_at(c);
}

struct area *ncb__mt_next(struct mt_cur *c)
{
	if (c->i + 1 < c->leaf->h.n || !c->leaf->next) {
		if (c->i < c->leaf->h.n)
			c->i++;
	} else {
		c->leaf = c->leaf->next;
		c->i = 0;
	}
	return ncb__mt_at(c);
}

struct area *ncb__mt_prev(struct mt_cur *c)
{
	if (c->i) {
		c->i--;
		return ncb__mt_at(c);
	}
	if (!c->leaf->prev)
		return NULL;
	c->leaf = c->leaf->prev;
	c->i = c->leaf->h.n - 1u;
	return ncb__mt_at(c);
}

struct area *ncb__mt_last(const struct mtree *t, struct mt_cur *c)
{
	c->leaf = descend(t, UINT64_MAX);
	c->i = c->leaf->h.n;
	return ncb__mt_prev(c);
}

/*
 * Put right into left's parent just after left (a new root if left was
 * the root); the parent has room.  Both slots are computed afresh.
 */
static void link_right(struct mtree *t, struct mt_node *left,
		       struct mt_node *right, struct mt_inner *spare_root)
{
	struct mt_inner *p = left->parent;
	unsigned int i;

	if (!p) {
		p = spare_root;
		p->h.n = 1;
		p->child[0] = left;
		left->parent = p;
		t->root = &p->h;
	}
	i = slot_of(p, left) + 1;
	memmove(p->child + i + 1, p->child + i, (p->h.n - i) *
		sizeof(p->child[0]));
	memmove(p->key + i + 1, p->key + i, (p->h.n - i) * sizeof(p->key[0]));
	memmove(p->gap + i + 1, p->gap + i, (p->h.n - i) * sizeof(p->gap[0]));
	p->child[i] = right;
	p->h.n++;
	right->parent = p;
	p->key[i - 1] = node_key(left);
	p->gap[i - 1] = node_gap(left);
	p->key[i] = node_key(right);
	p->gap[i] = node_gap(right);
}

/* Move children [from, n) of inner node a to the empty node b. */
static void inner_move(struct mt_inner *a, unsigned int from,
		       struct mt_inner *b)
{
	unsigned int k = a->h.n - from, j;

	memcpy(b->child, a->child + from, k * sizeof(b->child[0]));
	memcpy(b->key, a->key + from, k * sizeof(b->key[0]));
	memcpy(b->gap, a->gap + from, k * sizeof(b->gap[0]));
	for (j = 0; j < k; j++)
		b->child[j]->parent = b;
	b->h.n = (uint16_t)k;
	a->h.n = (uint16_t)from;
}

/*
 * Make room in inner node p for one more child, splitting it (and, going
 * up, its full ancestors) with the spare nodes given.
 */
static void inner_make_room(struct mtree *t, struct mt_inner *p,
			    struct mt_node ***spare)
{
	struct mt_inner *q, *root = NULL;

	if (p->h.n < INNER_MAX)
		return;
	if (p->h.parent)
		inner_make_room(t, p->h.parent, spare);
	else
		root = INNER(*(*spare)++);
	q = INNER(*(*spare)++);
	inner_move(p, INNER_MAX / 2, q);
	link_right(t, &p->h, &q->h, root);
	fix_up(&p->h.parent->h);
}

/* Nodes a leaf split at l needs: one per full ancestor, one more at top. */
static unsigned int split_cost(const struct mt_leaf *l)
{
	const struct mt_inner *p = l->h.parent;
	unsigned int k = 1;

	for (; p && p->h.n == INNER_MAX; p = p->h.parent)
		k++;
	return k + !p;
}

int ncb__mt_insert(struct mtree *t, const struct mt_cur *c,
		   const struct area *a)
{
	struct mt_node *spare[32], **sp = spare;
	struct mt_leaf *l = c->leaf, *r, *nl;
	unsigned int i = c->i, k, need, at;
	uint64_t pend, old;

	if (l->h.n == LEAF_MAX) {
		need = split_cost(l);
		for (k = 0; k < need; k++) {
			spare[k] = node_new(t, k == 0);
			if (!spare[k]) {
				while (k--)
					node_free(t, spare[k]);
				return -ENOMEM;
			}
		}
		r = LEAF(*sp++);
		at = i == LEAF_MAX && !l->next ? LEAF_FILL : LEAF_MAX / 2;
		memcpy(r->a, l->a + at, (LEAF_MAX - at) * sizeof(r->a[0]));
		r->h.n = (uint16_t)(LEAF_MAX - at);
		l->h.n = (uint16_t)at;
		r->next = l->next;
		if (r->next)
			r->next->prev = r;
		r->prev = l;
		l->next = r;
		if (l->h.parent)
			inner_make_room(t, l->h.parent, &sp);
		link_right(t, &l->h, &r->h, l->h.parent ? NULL :
			   INNER(*sp++));
		fix_up(&l->h.parent->h);
		if (i >= at) {
			l = r;
			i -= at;
		}
	}
	/* The gap the new area falls in, and where its next area is. */
	pend = i ? l->a[i - 1].end : prev_end(l, 0);
	nl = i < l->h.n ? l : l->h.n ? l->next : NULL;
	old = nl ? (nl == l ? l->a[i].start : nl->a[0].start) - pend : 0;
	memmove(l->a + i + 1, l->a + i, (l->h.n - i) * sizeof(l->a[0]));
	l->a[i] = *a;
	l->h.n++;
	t->count++;
	if (!i)
		fix_up(&l->h);		/* a new first address */
	else if (nl == l)
		gap_shrank(l, old);	/* one gap became two smaller */
	else
		gap_grew(l, a->start - pend);
	/* The next leaf's first gap now ends at the new area. */
	if (nl && nl != l)
		gap_shrank(nl, old);
	return 0;
}

static void inner_remove(struct mtree *t, struct mt_inner *p,
			 unsigned int i);

/*
 * A short node and a sibling under the same parent: the slot of the left
 * one of the pair (the node itself, or its left sibling if it is last).
 */
static unsigned int pair_slot(const struct mt_node *nd)
{
	const struct mt_inner *p = nd->parent;
	unsigned int i = slot_of(p, nd);

	return i + 1u < p->h.n ? i : i - 1;
}

/* Leaf l is short: take areas from a sibling, or merge with it. */
static void leaf_rebalance(struct mtree *t, struct mt_leaf *l)
{
	/* a and b: two adjacent leaves under p, l being one of them. */
	struct mt_inner *p = l->h.parent;
	unsigned int i = pair_slot(&l->h), k;
	struct mt_leaf *a = LEAF(p->child[i]), *b = LEAF(p->child[i + 1]);

	if (a->h.n + b->h.n <= LEAF_MAX) {
		memcpy(a->a + a->h.n, b->a, b->h.n * sizeof(a->a[0]));
		a->h.n = (uint16_t)(a->h.n + b->h.n);
		a->next = b->next;
		if (a->next)
			a->next->prev = a;
		node_free(t, &b->h);
		fix_up(&a->h);
		inner_remove(t, p, i + 1);
		return;
	}
	/* Share out evenly: no gap changes, only which leaf holds it. */
	k = (a->h.n + b->h.n) / 2u;
	if (a->h.n < k) {
		k -= a->h.n;
		memcpy(a->a + a->h.n, b->a, k * sizeof(a->a[0]));
		memmove(b->a, b->a + k, (b->h.n - k) * sizeof(b->a[0]));
		a->h.n = (uint16_t)(a->h.n + k);
		b->h.n = (uint16_t)(b->h.n - k);
	} else {
		k = a->h.n - k;
		memmove(b->a + k, b->a, b->h.n * sizeof(b->a[0]));
		memcpy(b->a, a->a + a->h.n - k, k * sizeof(b->a[0]));
		a->h.n = (uint16_t)(a->h.n - k);
		b->h.n = (uint16_t)(b->h.n + k);
	}
	fix_up(&a->h);
	fix_up(&b->h);
}

/* Move k children of inner node src, from index from, to dst at index at. */
static void inner_shift(struct mt_inner *dst, unsigned int at,
			struct mt_inner *src, unsigned int from, unsigned int k)
{
	unsigned int j;

	memmove(dst->child + at + k, dst->child + at,
		(dst->h.n - at) * sizeof(dst->child[0]));
	memmove(dst->key + at + k, dst->key + at,
		(dst->h.n - at) * sizeof(dst->key[0]));
	memmove(dst->gap + at + k, dst->gap + at,
		(dst->h.n - at) * sizeof(dst->gap[0]));
	memcpy(dst->child + at, src->child + from, k * sizeof(dst->child[0]));
	memcpy(dst->key + at, src->key + from, k * sizeof(dst->key[0]));
	memcpy(dst->gap + at, src->gap + from, k * sizeof(dst->gap[0]));
	for (j = 0; j < k; j++)
		dst->child[at + j]->parent = dst;
	dst->h.n = (uint16_t)(dst->h.n + k);
	memmove(src->child + from, src->child + from + k,
		(src->h.n - from - k) * sizeof(src->child[0]));
	memmove(src->key + from, src->key + from + k,
		(src->h.n - from - k) * sizeof(src->key[0]));
	memmove(src->gap + from, src->gap + from + k,
		(src->h.n - from - k) * sizeof(src->gap[0]));
	src->h.n = (uint16_t)(src->h.n - k);
}

/* Inner node q is short: take children from a sibling, or merge. */
static void inner_rebalance(struct mtree *t, struct mt_inner *q)
{
	struct mt_inner *p = q->h.parent;
	unsigned int i = pair_slot(&q->h), k;
	struct mt_inner *a = INNER(p->child[i]), *b = INNER(p->child[i + 1]);

	if (a->h.n + b->h.n <= INNER_MAX) {
		inner_shift(a, a->h.n, b, 0, b->h.n);
		node_free(t, &b->h);
		fix_up(&a->h);
		inner_remove(t, p, i + 1);
		return;
	}
	k = (a->h.n + b->h.n) / 2u;
	if (a->h.n < k)
		inner_shift(a, a->h.n, b, 0, k - a->h.n);
	else
		inner_shift(b, 0, a, k, a->h.n - k);
	fix_up(&a->h);
	fix_up(&b->h);
}

/* Drop slot i of inner node p (its child is gone). */
static void inner_remove(struct mtree *t, struct mt_inner *p, unsigned int i)
{
	unsigned int k = p->h.n - i - 1u;

	memmove(p->child + i, p->child + i + 1, k * sizeof(p->child[0]));
	memmove(p->key + i, p->key + i + 1, k * sizeof(p->key[0]));
	memmove(p->gap + i, p->gap + i + 1, k * sizeof(p->gap[0]));
	p->h.n--;
	if (!p->h.parent) {
		/* A root with one child hands over to it. */
		if (p->h.n == 1) {
			t->root = p->child[0];
			t->root->parent = NULL;
			node_free(t, &p->h);
		}
		return;
	}
	fix_up(&p->h);
	if (p->h.n < INNER_MIN)
		inner_rebalance(t, p);
}

void ncb__mt_erase(struct mtree *t, const struct mt_cur *c)
{
	struct mt_leaf *l = c->leaf, *nl;
	unsigned int i = c->i;
	uint64_t pend = i ? l->a[i - 1].end : prev_end(l, 0);
	uint64_t gone = l->a[i].start - pend, joined = 0;

	/* The area's gap and the next one's become one, larger than both. */
	nl = i + 1u < l->h.n ? l : l->next;
	if (nl)
		joined = (nl == l ? l->a[i + 1].start : nl->a[0].start) - pend;
	memmove(l->a + i, l->a + i + 1, (l->h.n - i - 1u) * sizeof(l->a[0]));
	l->h.n--;
	t->count--;
	if (nl && nl != l)
		gap_grew(nl, joined);
	if (!i || !l->h.n)
		fix_up(&l->h);
	else if (nl == l)
		gap_grew(l, joined);
	else
		gap_shrank(l, gone);
	if (l->h.parent && l->h.n < LEAF_MIN)
		leaf_rebalance(t, l);
}

void ncb__mt_changed(struct mtree *t, const struct mt_cur *c)
{
	(void)t;
	fix_up(&c->leaf->h);
	if (c->i + 1u == c->leaf->h.n && c->leaf->next)
		fix_up(&c->leaf->next->h);
}

struct search {
	uint64_t low;
	uint64_t high;
	uint64_t need;
	uint64_t guard;
	uint64_t out;
};

/*
 * The gap before entry i of leaf l, less a growing-down area's guard gap,
 * clipped to [low, high): [*s, *e), and whether need bytes fit in it.
 */
static int gap_fits(const struct mt_leaf *l, unsigned int i,
		    const struct search *q, uint64_t *s, uint64_t *e)
{
	const struct area *a = &l->a[i];

	*s = prev_end(l, i);
	*e = a->start;
	if (a->flags & A_GROWSDOWN)
		*e = *e > q->guard ? *e - q->guard : 0;
	if (*s < q->low)
		*s = q->low;
	if (*e > q->high)
		*e = q->high;
	return *e > *s && *e - *s >= q->need;
}

/*
 * Top-down.  A child's gaps end before the next child's first start, and
 * (past the first child) start after the previous child's first start:
 * children wholly outside [low, high) are skipped.
 */
static int search_rev(const struct mt_node *nd, struct search *q)
{
	const struct mt_inner *in = INNER(nd);
	uint64_t s, e;
	unsigned int i;

	for (i = nd->n; i-- > 0;) {
		if (nd->leaf) {
			if (LEAF(nd)->a[i].start <= q->low)
				return 0;
			if (gap_fits(LEAF(nd), i, q, &s, &e)) {
				q->out = e;
				return 1;
			}
			continue;
		}
		if (i + 1u < nd->n && in->key[i + 1] <= q->low)
			return 0;
		if (in->gap[i] < q->need || (i && in->key[i - 1] >= q->high))
			continue;
		if (search_rev(in->child[i], q))
			return 1;
	}
	return 0;
}

static int search_fwd(const struct mt_node *nd, struct search *q)
{
	const struct mt_inner *in = INNER(nd);
	uint64_t s, e;
	unsigned int i;

	for (i = 0; i < nd->n; i++) {
		if (nd->leaf) {
			if (prev_end(LEAF(nd), i) >= q->high)
				return 0;
			if (gap_fits(LEAF(nd), i, q, &s, &e)) {
				q->out = s;
				return 1;
			}
			continue;
		}
		if (i && in->key[i - 1] >= q->high)
			return 0;
		if (in->gap[i] < q->need ||
		    (i + 1u < nd->n && in->key[i + 1] <= q->low))
			continue;
		if (search_fwd(in->child[i], q))
			return 1;
	}
	return 0;
}

int ncb__mt_gap_rev(const struct mtree *t, uint64_t low, uint64_t high,
		    uint64_t need, uint64_t guard, uint64_t *end)
{
	struct search q = { low, high, need, guard, 0 };
	int found = search_rev(t->root, &q);

	*end = q.out;
	return found;
}

int ncb__mt_gap_fwd(const struct mtree *t, uint64_t low, uint64_t high,
		    uint64_t need, uint64_t guard, uint64_t *start)
{
	struct search q = { low, high, need, guard, 0 };
	int found = search_fwd(t->root, &q);

	*start = q.out;
	return found;
}

struct check {
	const struct mt_leaf *prev;
	uint64_t prev_end;
	size_t seen;
	size_t bytes;
	int depth;
	int bad;
};

/* Walk the tree in order, checking what every node claims. */
static void check_node(const struct mt_node *nd, const struct mt_inner *up,
		       int depth, struct check *c)
{
	const struct mt_leaf *l = LEAF(nd);
	unsigned int i;

	if (nd->parent != up || nd->n > (nd->leaf ? LEAF_MAX : INNER_MAX) ||
	    nd->n < (nd->leaf ? !!up : 2))
		c->bad = 1;
	if (!nd->leaf) {
		c->bytes += sizeof(struct mt_inner);
		for (i = 0; i < nd->n; i++) {
			const struct mt_node *ch = INNER(nd)->child[i];

			if (INNER(nd)->gap[i] != node_gap(ch) ||
			    INNER(nd)->key[i] != node_key(ch))
				c->bad = 1;
			check_node(ch, INNER(nd), depth + 1, c);
		}
		return;
	}
	c->bytes += sizeof(struct mt_leaf);
	if (c->depth < 0)
		c->depth = depth;
	if (depth != c->depth || l->prev != c->prev ||
	    (c->prev && c->prev->next != l))
		c->bad = 1;
	c->prev = l;
	for (i = 0; i < nd->n; i++) {
		if (l->a[i].start < c->prev_end ||
		    l->a[i].start >= l->a[i].end)
			c->bad = 1;
		c->prev_end = l->a[i].end;
		c->seen++;
	}
}

int ncb__mt_check(const struct mtree *t)
{
	struct check c = { NULL, 0, 0, 0, -1, 0 };

	check_node(t->root, NULL, 0, &c);
	if (c.prev && c.prev->next)
		c.bad = 1;
	return c.bad || c.seen != t->count || c.bytes != t->bytes ?
	       -EUCLEAN : 0;
}
