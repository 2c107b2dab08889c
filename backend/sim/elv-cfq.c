/* CFQ (elevator=cfq): see elv-cfq.h. */
#include <stdlib.h>

#include "blkq-int.h"

int cfq_init (struct blkq *q) { (void) q; return -1; }
void cfq_exit (struct blkq *q) { (void) q; }
void cfq_add (struct blkq *q, struct request *r, uint64_t now) { (void) q; (void) r; (void) now; }
void cfq_front_merged (struct blkq *q, struct request *r) { (void) q; (void) r; }
void cfq_requests_merged (struct blkq *q, struct request *a, struct request *b) { (void) q; (void) a; (void) b; }
struct request *cfq_pick (struct blkq *q, uint64_t now, bool force) { (void) q; (void) now; (void) force; return NULL; }
void cfq_completed (struct blkq *q, struct request *r, uint64_t now) { (void) q; (void) r; (void) now; }
bool cfq_must_queue (struct blkq *q, unsigned context, bool sync) { (void) q; (void) context; (void) sync; return false; }
uint64_t cfq_next_timer (const struct blkq *q) { (void) q; return UINT64_MAX; }
void cfq_run_timer (struct blkq *q, uint64_t now) { (void) q; (void) now; }
