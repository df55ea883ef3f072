// SPDX-License-Identifier: GPL-2.0

#include <linux/security.h>

/*
 * The lockdown checks of the C kprobe events: LOCKDOWN_KPROBES before a kprobe
 * is registered (trace_kprobe.c:498) and LOCKDOWN_TRACEFS when a tracing file
 * is opened (trace_kprobe.c:1330, trace.c:581). security_locked_down() is an
 * inline stub without CONFIG_SECURITY, and its reasons are not visible to
 * bindgen, hence one helper per reason.
 */
int rust_helper_security_locked_down_kprobes(void)
{
	return security_locked_down(LOCKDOWN_KPROBES);
}

int rust_helper_security_locked_down_tracefs(void)
{
	return security_locked_down(LOCKDOWN_TRACEFS);
}
