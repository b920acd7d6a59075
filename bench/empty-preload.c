/* SPDX-License-Identifier: MIT */
/*
 * b-watch's floor under --preload: a shared object with nothing in it,
 * preloaded as libnoclobber-preload.so is.  What it costs a program is
 * what LD_PRELOAD itself costs (one more object opened, mapped and in
 * every symbol's search), which no watcher inside the process can go
 * under.
 */
int ncb_bench_empty_preload;
