// SPDX-License-Identifier: GPL-2.0

#include <linux/fs.h>
#include <linux/kallsyms.h>
#include <linux/mount.h>
#include <linux/namei.h>
#include <linux/percpu.h>
#include <linux/security.h>
#include <linux/trace.h>
#include <linux/trace_dynevent.h>
#include <linux/trace_events.h>

/*
 * The kernel crate mirrors two numbers bindgen does not see; the Rust half
 * of each check asserts the same (rust/kernel/kallsyms.rs,
 * rust/kernel/trace_event.rs), so a change on either side fails the build.
 */
/* kallsyms::SYMBOL_LEN */
static_assert(KSYM_SYMBOL_LEN <= 768);
/* trace_event::ENTRY_SIZE, and the record heads the module lays out */
static_assert(sizeof(struct trace_entry) == 8);

/* TRACE_FUNCTION_TYPE, a pointer-valued macro bindgen cannot evaluate. */
const char *rust_helper_trace_function_type(void)
{
	return TRACE_FUNCTION_TYPE;
}

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

#ifdef CONFIG_PERF_EVENTS
/*
 * This CPU's list of perf events open on @call, or NULL if there is none
 * (kprobe_perf_func(): `head = this_cpu_ptr(call->perf_events)`).
 */
struct hlist_head *rust_helper_trace_event_perf_head(struct trace_event_call *call)
{
	struct hlist_head *head = this_cpu_ptr(call->perf_events);

	return hlist_empty(head) ? NULL : head;
}

bool rust_helper_bpf_prog_array_valid(struct trace_event_call *call)
{
	return bpf_prog_array_valid(call);
}

/* trace_call_bpf(), or its stub without CONFIG_BPF_EVENTS. */
unsigned int rust_helper_trace_event_call_bpf(struct trace_event_call *call, void *ctx)
{
	return trace_call_bpf(call, ctx);
}
#endif

void rust_helper_inode_lock(struct inode *inode)
{
	inode_lock(inode);
}

void rust_helper_inode_unlock(struct inode *inode)
{
	inode_unlock(inode);
}

/*
 * For the kernel crate's tracefs doctests, which run at boot before user
 * space mounts tracefs: opens the file @name at the tracefs root as a user's
 * open() would (through the file operations), on an internal mount.
 */
struct file *rust_helper_tracefs_open_root_file_for_test(const char *name, int flags)
{
	struct file_system_type *type = get_fs_type("tracefs");
	struct vfsmount *mnt;
	struct path path;
	struct file *f;

	if (!type)
		return ERR_PTR(-ENODEV);
	mnt = kern_mount(type);
	put_filesystem(type);
	if (IS_ERR(mnt))
		return ERR_CAST(mnt);
	path.mnt = mnt;
	path.dentry = lookup_one_len_unlocked(name, mnt->mnt_root, strlen(name));
	if (IS_ERR(path.dentry)) {
		f = ERR_CAST(path.dentry);
	} else {
		f = d_really_is_negative(path.dentry) ? ERR_PTR(-ENOENT) :
			dentry_open(&path, flags, current_cred());
		dput(path.dentry);
	}
	/* An open file holds its own reference to the mount. */
	kern_unmount(mnt);
	return f;
}

void rust_helper_list_add_tail(struct list_head *new, struct list_head *head)
{
	list_add_tail(new, head);
}

int rust_helper_dyn_event_init(struct dyn_event *ev, struct dyn_event_operations *ops)
{
	return dyn_event_init(ev, ops);
}

void rust_helper_dyn_event_remove(struct dyn_event *ev)
{
	dyn_event_remove(ev);
}

/*
 * kprobes::HitCounter: one u64 per CPU, as trace_kprobe.nhit
 * (trace_kprobe.c:287). The Rust side increments with the x86-64 this-CPU
 * instruction inline and uses kprobes_hit_counter_inc() elsewhere.
 */
u64 *rust_helper_kprobes_hit_counter_alloc(void)
{
	return (u64 __force *)alloc_percpu(u64);
}

void rust_helper_kprobes_hit_counter_free(u64 *c)
{
	free_percpu((u64 __percpu __force *)c);
}

void rust_helper_kprobes_hit_counter_inc(u64 *c)
{
	this_cpu_inc(*(u64 __percpu __force *)c);
}

void rust_helper_kprobes_hit_counter_add(u64 *c, u64 n)
{
	this_cpu_add(*(u64 __percpu __force *)c, n);
}

u64 rust_helper_kprobes_hit_counter_sum(u64 *c)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += *per_cpu_ptr((u64 __percpu __force *)c, cpu);
	return sum;
}
