/* slice: ask the kernel for short time slices for the calling thread, or the default again. */
#ifndef AGENT_SLICE_H
#define AGENT_SLICE_H

#define SLICE_NS 100000ULL /* 0.1 ms: the shortest a fair thread may ask for */

/* Ask that the calling thread run in short slices (Linux 6.12+, EEVDF): woken by a frame
 * or a chunk, it then gets a core at once instead of when a busy task's slice ends (the
 * default slice is 1.4 ms on two cores). The runtime's threads do little work per wake-up, which is
 * what short slices are for. Returns 0 when the kernel took it, -1 elsewhere (older
 * kernels, other systems); the runtime works the same either way. Needs no privilege. */
int slice_short(void);

/* The kernel's default slice again, while an answer streams in: a thread that then wakes a
 * little later reads more of the stream at once and sends it as fewer frames, which costs the
 * gateway less; the first token is already out by then (stream.c). Same returns. */
int slice_default(void);

#endif
