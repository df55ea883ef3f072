// SPDX-License-Identifier: GPL-2.0

#include <linux/security.h>

/*
 * The lockdown check of the C kprobe events when a tracing file is opened
 * (LOCKDOWN_TRACEFS, trace_kprobe.c:1330, trace.c:581).
 * security_locked_down() is an inline stub without CONFIG_SECURITY, and its
 * reasons are not visible to bindgen.
 */
int rust_helper_security_locked_down_tracefs(void)
{
	return security_locked_down(LOCKDOWN_TRACEFS);
}
