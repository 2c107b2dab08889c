/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The engine's statistics: counters kept with relaxed atomics on the
 * request path, high-water marks read under their stage's lock. */
#include <inttypes.h>
#include <stdio.h>

#include "internal.h"

#define LOAD(x) atomic_load_explicit (&(x), memory_order_relaxed)

void
engine_get_stats (struct engine *e, struct engine_stats *st)
{
  *st = (struct engine_stats) {
    .reads = LOAD (e->st.reads), .writes = LOAD (e->st.writes),
    .zeros = LOAD (e->st.zeros), .trims = LOAD (e->st.trims),
    .flushes = LOAD (e->st.flushes),
    .read_bytes = LOAD (e->st.read_bytes),
    .write_bytes = LOAD (e->st.write_bytes),
    .read_chunks = LOAD (e->st.read_chunks),
    .write_chunks = LOAD (e->st.write_chunks),
    .inline_chunks = LOAD (e->st.inline_chunks),
    .worker_chunks = LOAD (e->st.worker_chunks),
    .batched_chunks = LOAD (e->st.batched_chunks),
    .dispatches = LOAD (e->st.dispatches),
    .sequential = LOAD (e->st.sequential),
    .rmw_sectors = LOAD (e->st.rmw_sectors),
    .errors = LOAD (e->st.errors),
    .inflight_max = LOAD (e->st.inflight_max),
    .decrypt_sample_ns = LOAD (e->st.crypt_sample_ns[0]),
    .decrypt_sample_bytes = LOAD (e->st.crypt_sample_bytes[0]),
    .encrypt_sample_ns = LOAD (e->st.crypt_sample_ns[1]),
    .encrypt_sample_bytes = LOAD (e->st.crypt_sample_bytes[1]),
  };
  if (e->pool.w) {
    pthread_mutex_lock (&e->pool.lock);
    st->worker_depth_max = e->pool.depth_max;
    pthread_mutex_unlock (&e->pool.lock);
  }
  if (e->wo.running) {
    pthread_mutex_lock (&e->wo.lock);
    st->rounds = e->wo.rounds;
    st->anticipations = e->wo.anticipations;
    st->direct = e->wo.direct;
    st->writeout_depth_max = e->wo.depth_max;
    st->writeout_depth = e->wo.depth;
    st->batch_max = e->wo.batch_max;
    pthread_mutex_unlock (&e->wo.lock);
  }
  pthread_mutex_lock (&e->bufs.lock);
  st->buffer_waits = e->bufs.waits;
  st->buffers_max = e->bufs.out_max;
  pthread_mutex_unlock (&e->bufs.lock);
}

static double
mib (uint64_t bytes)
{
  return bytes / (1024.0 * 1024.0);
}

char *
engine_format_stats (const struct engine_stats *st, char *buf, size_t size)
{
  double seq = st->dispatches ? 100.0 * st->sequential / st->dispatches
    : 0.0;

  snprintf (buf, size,
            "reads %" PRIu64 " (%.1f MiB), writes %" PRIu64
            " + zeros %" PRIu64 " (%.1f MiB), trims %" PRIu64
            ", flushes %" PRIu64 ", errors %" PRIu64
            "; chunks read %" PRIu64 " write %" PRIu64
            " (crypted inline %" PRIu64 ", on workers %" PRIu64
            ", in batches %" PRIu64 ")"
            "; backend writes %" PRIu64 ", %.1f%% sequential"
            "; write-out rounds %" PRIu64 " (largest %u chunks, %" PRIu64
            " chunks written by their crypter, %" PRIu64 " gaps waited for)"
            "; high-water: requests %u, worker queue %u chunks"
            ", write-out queue %u chunks, buffers %u (cap waits %" PRIu64
            "); rmw sectors %" PRIu64,
            st->reads, mib (st->read_bytes), st->writes, st->zeros,
            mib (st->write_bytes), st->trims, st->flushes, st->errors,
            st->read_chunks, st->write_chunks, st->inline_chunks,
            st->worker_chunks, st->batched_chunks, st->dispatches, seq,
            st->rounds,
            st->batch_max, st->direct, st->anticipations, st->inflight_max,
            st->worker_depth_max,
            st->writeout_depth_max, st->buffers_max, st->buffer_waits,
            st->rmw_sectors);
  return buf;
}
