// SPDX-License-Identifier: GPL-2.0
/*
 * Pipes made at runtime through configfs:
 *
 *   mkdir /sys/kernel/config/vstream/cam
 *   echo 2 > /sys/kernel/config/vstream/cam/readers
 *   echo 1 > /sys/kernel/config/vstream/cam/mplane      (optional)
 *   echo 1 > /sys/kernel/config/vstream/cam/enabled     (nodes appear)
 *   echo 0 > /sys/kernel/config/vstream/cam/enabled     (nodes go)
 *   rmdir /sys/kernel/config/vstream/cam
 *
 * The attributes describe the pipe and can change only while it is
 * disabled (EBUSY otherwise).  Disabling or removing a pipe whose nodes
 * are open unregisters them at once, as an unplugged camera: the open
 * handles get ENODEV until closed (vstream_pipe_destroy()).
 */

#include <linux/configfs.h>
#include <linux/ctype.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "vstream.h"

struct vstream_cfs_pipe {
	struct config_item item;
	/*
	 * Serialises the attribute stores of one pipe, and enabling against
	 * removal: configfs only keeps the item alive while a store runs.
	 */
	struct mutex lock;
	struct vstream_pipe_config cfg;
	char format[32];		/* as written, for reading back */
	struct vstream_pipe *pipe;	/* while enabled */
	bool removed;			/* rmdir'ed: can no longer be enabled */
};

static struct vstream_cfs_pipe *to_cfs_pipe(struct config_item *item)
{
	return container_of(item, struct vstream_cfs_pipe, item);
}

/* Lock @cp for a change of its description: only while disabled. */
static int vstream_cfs_lock_disabled(struct vstream_cfs_pipe *cp)
{
	mutex_lock(&cp->lock);
	if (cp->pipe || cp->removed) {
		mutex_unlock(&cp->lock);
		return cp->removed ? -ENODEV : -EBUSY;
	}
	return 0;
}

static ssize_t vstream_cfs_store_uint(struct config_item *item, const char *page,
				      size_t len, unsigned int *field,
				      unsigned int min, unsigned int max)
{
	struct vstream_cfs_pipe *cp = to_cfs_pipe(item);
	unsigned int v;
	int ret;

	ret = kstrtouint(page, 0, &v);
	if (ret)
		return ret;
	if (v < min || v > max)
		return -EINVAL;
	ret = vstream_cfs_lock_disabled(cp);
	if (ret)
		return ret;
	*field = v;
	mutex_unlock(&cp->lock);
	return len;
}

/* readers, max_width, max_height: numbers in [min, max] */
#define VSTREAM_CFS_UINT_ATTR(field, min, max)					\
static ssize_t vstream_cfs_##field##_show(struct config_item *item, char *page)	\
{										\
	return sprintf(page, "%u\n", to_cfs_pipe(item)->cfg.field);		\
}										\
										\
static ssize_t vstream_cfs_##field##_store(struct config_item *item,		\
					   const char *page, size_t len)	\
{										\
	return vstream_cfs_store_uint(item, page, len,				\
				      &to_cfs_pipe(item)->cfg.field, min, max);	\
}										\
CONFIGFS_ATTR(vstream_cfs_, field)

VSTREAM_CFS_UINT_ATTR(readers, 1, VSTREAM_MAX_READERS);
VSTREAM_CFS_UINT_ATTR(max_width, VSTREAM_MIN_SIZE, 16384);
VSTREAM_CFS_UINT_ATTR(max_height, VSTREAM_MIN_SIZE, 16384);

static ssize_t vstream_cfs_label_show(struct config_item *item, char *page)
{
	struct vstream_cfs_pipe *cp = to_cfs_pipe(item);
	ssize_t ret;

	mutex_lock(&cp->lock);
	ret = sprintf(page, "%s\n", cp->cfg.label[0] ? cp->cfg.label : cp->cfg.name);
	mutex_unlock(&cp->lock);
	return ret;
}

static ssize_t vstream_cfs_label_store(struct config_item *item, const char *page,
				       size_t len)
{
	struct vstream_cfs_pipe *cp = to_cfs_pipe(item);
	size_t n = strcspn(page, "\n");
	size_t i;
	int ret;

	/*
	 * a card name: printable ASCII (single bytes above 0x7f would be
	 * invalid UTF-8 in QUERYCAP), and whole (no silent truncation)
	 */
	if (n >= sizeof(cp->cfg.label))
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (page[i] < 0x20 || page[i] > 0x7e)
			return -EINVAL;
	ret = vstream_cfs_lock_disabled(cp);
	if (ret)
		return ret;
	memcpy(cp->cfg.label, page, n);
	cp->cfg.label[n] = 0;
	mutex_unlock(&cp->lock);
	return len;
}

static ssize_t vstream_cfs_format_show(struct config_item *item, char *page)
{
	struct vstream_cfs_pipe *cp = to_cfs_pipe(item);
	ssize_t ret;

	mutex_lock(&cp->lock);
	ret = sprintf(page, "%s\n", cp->format);
	mutex_unlock(&cp->lock);
	return ret;
}

static ssize_t vstream_cfs_format_store(struct config_item *item, const char *page,
					size_t len)
{
	struct vstream_cfs_pipe *cp = to_cfs_pipe(item);
	char buf[sizeof(cp->format)];
	size_t n = strcspn(page, "\n");
	int ret;

	if (n >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, page, n);
	buf[n] = 0;
	ret = vstream_cfs_lock_disabled(cp);
	if (ret)
		return ret;
	ret = vstream_parse_format(buf, &cp->cfg);
	if (!ret)
		strscpy(cp->format, buf, sizeof(cp->format));
	mutex_unlock(&cp->lock);
	return ret ?: len;
}

/* 1: the nodes speak the multi-planar API (one plane per frame) */
static ssize_t vstream_cfs_mplane_show(struct config_item *item, char *page)
{
	struct vstream_cfs_pipe *cp = to_cfs_pipe(item);
	ssize_t ret;

	mutex_lock(&cp->lock);
	ret = sprintf(page, "%d\n", cp->cfg.mplane);
	mutex_unlock(&cp->lock);
	return ret;
}

static ssize_t vstream_cfs_mplane_store(struct config_item *item, const char *page,
					size_t len)
{
	struct vstream_cfs_pipe *cp = to_cfs_pipe(item);
	bool on;
	int ret;

	ret = kstrtobool(page, &on);
	if (ret)
		return ret;
	ret = vstream_cfs_lock_disabled(cp);
	if (ret)
		return ret;
	cp->cfg.mplane = on;
	mutex_unlock(&cp->lock);
	return len;
}

static ssize_t vstream_cfs_enabled_show(struct config_item *item, char *page)
{
	struct vstream_cfs_pipe *cp = to_cfs_pipe(item);
	ssize_t ret;

	mutex_lock(&cp->lock);
	ret = sprintf(page, "%d\n", !!cp->pipe);
	mutex_unlock(&cp->lock);
	return ret;
}

static ssize_t vstream_cfs_enabled_store(struct config_item *item, const char *page,
					 size_t len)
{
	struct vstream_cfs_pipe *cp = to_cfs_pipe(item);
	struct vstream_pipe *pipe;
	bool on;
	int ret;

	ret = kstrtobool(page, &on);
	if (ret)
		return ret;
	mutex_lock(&cp->lock);
	if (cp->removed) {
		ret = -ENODEV;
	} else if (on && !cp->pipe) {
		pipe = vstream_pipe_create(&cp->cfg);
		if (IS_ERR(pipe))
			ret = PTR_ERR(pipe);
		else
			cp->pipe = pipe;
	} else if (!on && cp->pipe) {
		vstream_pipe_destroy(cp->pipe);
		cp->pipe = NULL;
	}
	mutex_unlock(&cp->lock);
	return ret ?: len;
}

/* The nodes of an enabled pipe: "<sysfs name> /dev/<node>" a line. */
static ssize_t vstream_cfs_devices_show(struct config_item *item, char *page)
{
	struct vstream_cfs_pipe *cp = to_cfs_pipe(item);
	struct vstream_pipe *pipe;
	ssize_t len = 0;
	unsigned int i;

	mutex_lock(&cp->lock);
	pipe = cp->pipe;
	for (i = 0; pipe && i <= pipe->readers; i++) {
		struct video_device *vdev = i ? &pipe->cap[i - 1].vdev : &pipe->out.vdev;

		len += sysfs_emit_at(page, len, "%s /dev/%s\n", vdev->name,
				     video_device_node_name(vdev));
	}
	mutex_unlock(&cp->lock);
	return len;
}

CONFIGFS_ATTR(vstream_cfs_, label);
CONFIGFS_ATTR(vstream_cfs_, format);
CONFIGFS_ATTR(vstream_cfs_, mplane);
CONFIGFS_ATTR(vstream_cfs_, enabled);
CONFIGFS_ATTR_RO(vstream_cfs_, devices);

static struct configfs_attribute *vstream_cfs_attrs[] = {
	&vstream_cfs_attr_readers,
	&vstream_cfs_attr_max_width,
	&vstream_cfs_attr_max_height,
	&vstream_cfs_attr_label,
	&vstream_cfs_attr_format,
	&vstream_cfs_attr_mplane,
	&vstream_cfs_attr_enabled,
	&vstream_cfs_attr_devices,
	NULL,
};

static void vstream_cfs_release(struct config_item *item)
{
	struct vstream_cfs_pipe *cp = to_cfs_pipe(item);

	mutex_destroy(&cp->lock);
	kfree(cp);
}

static struct configfs_item_operations vstream_cfs_item_ops = {
	.release	= vstream_cfs_release,
};

static const struct config_item_type vstream_cfs_pipe_type = {
	.ct_item_ops	= &vstream_cfs_item_ops,
	.ct_attrs	= vstream_cfs_attrs,
	.ct_owner	= THIS_MODULE,
};

static struct config_item *vstream_cfs_make_item(struct config_group *group,
						 const char *name)
{
	struct vstream_cfs_pipe *cp;

	if (!vstream_name_valid(name))
		return ERR_PTR(-EINVAL);
	cp = kzalloc(sizeof(*cp), GFP_KERNEL);
	if (!cp)
		return ERR_PTR(-ENOMEM);
	mutex_init(&cp->lock);
	strscpy(cp->cfg.name, name, sizeof(cp->cfg.name));
	cp->cfg.readers = 1;
	cp->cfg.max_width = vstream_max_width;
	cp->cfg.max_height = vstream_max_height;
	config_item_init_type_name(&cp->item, name, &vstream_cfs_pipe_type);
	return &cp->item;
}

/* rmdir: an enabled pipe goes as if disabled first. */
static void vstream_cfs_drop_item(struct config_group *group, struct config_item *item)
{
	struct vstream_cfs_pipe *cp = to_cfs_pipe(item);

	mutex_lock(&cp->lock);
	cp->removed = true;
	if (cp->pipe)
		vstream_pipe_destroy(cp->pipe);
	cp->pipe = NULL;
	mutex_unlock(&cp->lock);
	config_item_put(item);
}

static struct configfs_group_operations vstream_cfs_group_ops = {
	.make_item	= vstream_cfs_make_item,
	.drop_item	= vstream_cfs_drop_item,
};

static const struct config_item_type vstream_cfs_subsys_type = {
	.ct_group_ops	= &vstream_cfs_group_ops,
	.ct_owner	= THIS_MODULE,
};

static struct configfs_subsystem vstream_cfs_subsys = {
	.su_group = {
		.cg_item = {
			.ci_namebuf	= VSTREAM_NAME,
			.ci_type	= &vstream_cfs_subsys_type,
		},
	},
};

/**
 * vstream_configfs_init() - register /sys/kernel/config/vstream
 *
 * Return: configfs_register_subsystem()'s result.
 */
int vstream_configfs_init(void)
{
	config_group_init(&vstream_cfs_subsys.su_group);
	mutex_init(&vstream_cfs_subsys.su_mutex);
	return configfs_register_subsystem(&vstream_cfs_subsys);
}

/**
 * vstream_configfs_exit() - unregister /sys/kernel/config/vstream
 *
 * Runs only when no runtime pipe is left: each holds a module reference.
 */
void vstream_configfs_exit(void)
{
	configfs_unregister_subsystem(&vstream_cfs_subsys);
}
