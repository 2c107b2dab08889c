/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What a simulated device is asked to do: shared by the device models
 * (model.h) and the block queue (blkq.h), so that neither header has to
 * include the other. */
#ifndef DMCRYPT_SIM_DEVOP_H
#define DMCRYPT_SIM_DEVOP_H

enum dev_op
{
  DEV_READ,
  DEV_WRITE,
  DEV_FLUSH,                    /* no data: the write cache to media */
  DEV_DISCARD,
};

#endif /* DMCRYPT_SIM_DEVOP_H */
