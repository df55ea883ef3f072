// SPDX-License-Identifier: GPL-2.0

#include <linux/fs.h>

void rust_helper_inode_lock(struct inode *inode)
{
	inode_lock(inode);
}

void rust_helper_inode_unlock(struct inode *inode)
{
	inode_unlock(inode);
}
