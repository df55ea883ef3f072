// SPDX-License-Identifier: GPL-2.0

#include <linux/fs.h>
#include <linux/mount.h>
#include <linux/namei.h>

#ifdef CONFIG_RUST_KERNEL_DOCTESTS
/*
 * For the kernel crate's tracefs doctests, which run at boot before user
 * space mounts tracefs: opens the file @name at the tracefs root as a user's
 * open() would (through the file operations), on an internal mount.
 */
__rust_helper struct file *
rust_helper_tracefs_open_root_file_for_test(const char *name, int flags)
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
	path.dentry = lookup_noperm_unlocked(&QSTR(name), mnt->mnt_root);
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
#endif
