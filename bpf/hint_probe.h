/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* hint_probe: state shared between hint_probe.bpf.c and its loader. */
#ifndef KVFDP_BPF_HINT_PROBE_H
#define KVFDP_BPF_HINT_PROBE_H

/* fcntl commands for per-inode write-life hints (include/uapi/linux/fcntl.h). */
#define KVFDP_F_GET_RW_HINT 1035
#define KVFDP_F_SET_RW_HINT 1036

#endif
