/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The CPU each bio is submitted to dm-crypt from (model.h), which in
 * Linux 3.16 is the CPU whose kcryptd encrypts it and submits it on:
 * dm-crypt's crypt_queue is a per-CPU workqueue (alloc_workqueue
 * ("kcryptd", WQ_CPU_INTENSIVE | WQ_MEM_RECLAIM, 1), crypt_ctr), and
 * kcryptd_queue_crypt queues the bio on the current CPU's.
 *
 * fsync: btrfs_sync_file raises the inode's sync_writers, so
 * btrfs_submit_bio_hook checksums each bio inline and btrfs_map_bio
 * submits it at once: dd's own task, on dd's CPU.
 *
 * Background writeback: btrfs_submit_bio_hook hands each bio to the
 * "worker" workqueue for its checksum, whose ordered completions
 * (run_one_async_done) put it on the device's pending list
 * (btrfs_schedule_bio); one work item of the "submit" workqueue
 * (max_active 1 for one device) drains that list, run_scheduled_bios,
 * and goes idle when it is empty.  Both workqueues are WQ_UNBOUND
 * (open_ctree, fs/btrfs/disk-io.c): the kworker that runs the drain is
 * whichever idle worker of the unbound pool is woken, on the CPU the
 * scheduler places it (select_task_rq_fair, select_idle_sibling: an
 * idle CPU sharing the waker's cache, all four on the seed's
 * dual-core, hyper-threaded laptop).  Submitting a bio to dm-crypt is a
 * queue_work, far quicker than the checksum that feeds it, so the drain
 * empties the list and sleeps every SUBMIT_BATCH bios; which CPU is
 * idle at each wake-up is a matter of the other threads the client
 * cannot see, so the model draws it uniformly from the CPUs.
 *
 * fsync_spread is a what-if the sources do not support: fsync's bios
 * drawn as the background ones are, as if dd's task moved to another
 * CPU between its submissions. */
#include "../../common/xorshift.h"
#include "model.h"

unsigned
wb_submit_cpu (struct wb_model *m, bool sync)
{
  if (sync && !m->cfg.fsync_spread)
    return m->cfg.dd_cpu;
  if (m->batch_left == 0) {
    /* The top bits: xorshift's low bits are its weakest. */
    m->cpu = (unsigned) ((xorshift64s_next (&m->rng) >> 32) % m->cfg.cpus);
    m->batch_left = m->cfg.submit_batch;
  }
  m->batch_left--;
  return m->cpu;
}
