/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The kernel series whose pipeline the lab models (kernel=): the block
 * layer under dm-crypt (request lists and plugging, or blk-mq), its
 * default elevator and HZ, and dm-crypt's own threads.  The engine
 * (dm-crypt's threads) and the simulated block layer (backend/sim)
 * both go by it. */
#ifndef DMCRYPT_BACKEND_KSERIES_H
#define DMCRYPT_BACKEND_KSERIES_H

enum kernel_series
{
  KSERIES_NONE = 0,     /* dmcrypt's own pipeline: no kernel= given */
  KSERIES_2_6_32,       /* 2010: one kcryptd, one kcryptd_io thread,
                           request lists with a plug and its timer, CFQ */
  KSERIES_3_16,         /* 2.6.38 .. 3.19: kcryptd per CPU, each submits
                           what it encrypted; request lists, CFQ */
  KSERIES_4_0,          /* 4.0 .. 4.x: kcryptd unbound, dmcrypt_write
                           sorts what accumulated; request lists, CFQ */
  KSERIES_6_1,          /* 6.x: as 4.0 on blk-mq with mq-deadline */
};

/* KSERIES_NONE for NULL; -1 for a name that is not a series. */
int kernel_series_parse (const char *name);
/* "2.6.32" ...; "none" for KSERIES_NONE. */
const char *kernel_series_name (enum kernel_series k);
/* "2.6.32 3.16 4.0 6.1": for messages and --dump-plugin. */
const char *kernel_series_names (void);

#endif /* DMCRYPT_BACKEND_KSERIES_H */
