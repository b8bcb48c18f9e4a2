// SPDX-License-Identifier: GPL-2.0
/*
 * Module parameters, the platform device, and creation and removal of
 * the pipes and their video nodes.  A pipe made by module parameters
 * lives as long as the module; one made through configfs
 * (vstream-configfs.c) until it is disabled.  Either way its memory is
 * freed only when the last of its video devices is released, i.e. when
 * the last file handle on a node is closed.
 */

#include <linux/ctype.h>
#include <linux/font.h>
#include <linux/idr.h>
#include <linux/module.h>
#include <linux/platform_device.h>
#include <linux/slab.h>
#include <linux/videodev2.h>
#include <media/v4l2-event.h>

#include "vstream.h"
#include "vstream-compat.h"

static unsigned int pipes = 1;
module_param(pipes, uint, 0444);
MODULE_PARM_DESC(pipes, "number of pipes made at load (0-16, default 1); more through configfs");

static char *card_label[VSTREAM_MAX_PIPES];
module_param_array(card_label, charp, NULL, 0444);
MODULE_PARM_DESC(card_label, "card name of each pipe (default \"vstream N\")");

static bool mplane[VSTREAM_MAX_PIPES];
module_param_array(mplane, bool, NULL, 0444);
MODULE_PARM_DESC(mplane, "per pipe: nodes use the multi-planar API (one plane) (default N)");

static unsigned int readers = 1;
module_param(readers, uint, 0444);
MODULE_PARM_DESC(readers, "capture nodes per pipe, each gets every frame (1-4, default 1)");

static int video_nr[VSTREAM_MAX_PIPES * (1 + VSTREAM_MAX_READERS)] = {
	[0 ... VSTREAM_MAX_PIPES * (1 + VSTREAM_MAX_READERS) - 1] = -1
};
module_param_array(video_nr, int, NULL, 0444);
MODULE_PARM_DESC(video_nr, "/dev/videoN numbers: output, then capture nodes, per pipe");

unsigned int vstream_max_width = 8192;
module_param_named(max_width, vstream_max_width, uint, 0444);
MODULE_PARM_DESC(max_width, "largest frame width (default 8192)");

unsigned int vstream_max_height = 8192;
module_param_named(max_height, vstream_max_height, uint, 0444);
MODULE_PARM_DESC(max_height, "largest frame height (default 8192)");

unsigned int vstream_min_buffers = 2;
module_param_named(min_buffers, vstream_min_buffers, uint, 0444);
MODULE_PARM_DESC(min_buffers, "fewest buffers a queue allocates (2-32, default 2)");

unsigned int vstream_max_queue_mb = VSTREAM_QUEUE_MB;
module_param_named(max_queue_mb, vstream_max_queue_mb, uint, 0644);
MODULE_PARM_DESC(max_queue_mb,
		 "most frame memory one queue, i.e. one opener, may allocate in MiB (default 1024)");

bool vstream_pace_output = true;
module_param_named(pace_output, vstream_pace_output, bool, 0444);
MODULE_PARM_DESC(pace_output,
		 "consume output frames no faster than the output frame rate (default on); off: at once");

static struct vstream_pipe *vstream_pipes[VSTREAM_MAX_PIPES];
/* bus_info numbers, unique among pipes whose nodes are still open */
static DEFINE_IDA(vstream_ids);

static void vstream_pdev_release(struct device *dev)
{
}

static struct platform_device vstream_pdev = {
	.name		= VSTREAM_NAME,
	.id		= -1,
	.dev.release	= vstream_pdev_release,
};

/* probe's result: platform_driver_register() succeeds even if probe fails */
static int vstream_probe_err = -ENODEV;

static ssize_t stats_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	struct vstream_node *node = video_get_drvdata(to_video_device(dev));
	u64 frames, drops, zerocopy, copies, flips;
	struct v4l2_fract tpf;
	bool streaming;

	mutex_lock(&node->pipe->lock);
	frames = node->frames;
	drops = node->drops;
	zerocopy = node->zerocopy;
	copies = node->copies;
	flips = node->flips;
	streaming = node->streaming;
	tpf = node->tpf;
	mutex_unlock(&node->pipe->lock);
	/* streaming and interval let vstream-ctl tell whether a producer is on */
	return sysfs_emit(buf,
			  "frames %llu\ndrops %llu\nzerocopy %llu\ncopies %llu\ncow %lld\nflips %llu\nstreaming %d\ninterval %u/%u\n",
			  frames, drops, zerocopy, copies,
			  (long long)atomic64_read(&node->cow), flips, streaming,
			  tpf.numerator, tpf.denominator);
}
static DEVICE_ATTR_RO(stats);

static struct attribute *vstream_node_attrs[] = {
	&dev_attr_stats.attr,
	NULL
};
ATTRIBUTE_GROUPS(vstream_node);

static int vstream_node_init(struct vstream_pipe *pipe, struct vstream_node *node,
			     bool output, unsigned int reader)
{
	struct video_device *vdev = &node->vdev;
	int ret;

	node->pipe = pipe;
	node->output = output;
	node->reader = reader;
	INIT_LIST_HEAD(&node->active);

	node->vfmt = pipe->cfg.fixed ?: vstream_format_by_index(0);
	node->fmt.width = pipe->cfg.fixed ? pipe->cfg.fixed_width : 640;
	node->fmt.height = pipe->cfg.fixed ? pipe->cfg.fixed_height : 480;
	node->fmt.field = V4L2_FIELD_NONE;
	vstream_fill_pix(pipe, node->vfmt, &node->fmt, output);
	node->tpf.numerator = 1;
	node->tpf.denominator = VSTREAM_FPS_DEFAULT;
	if (pipe->cfg.fixed)
		node->tpf = pipe->cfg.fixed_tpf;

	ret = vstream_ctrls_init(node);
	if (ret)
		return ret;
	ret = vstream_queue_init(node);
	if (ret)
		goto free_ctrls;

	if (!output) {
		tpg_init(&node->tpg, node->fmt.width, node->fmt.height);
		ret = tpg_alloc(&node->tpg, pipe->cfg.max_width);
		if (ret)
			goto free_ctrls;
		vstream_cap_setup_tpg(node);
		v4l2_ctrl_handler_setup(&node->ctrls);
	}

	if (output)
		snprintf(vdev->name, sizeof(vdev->name), "%s-output", pipe->cfg.name);
	else if (pipe->readers > 1)
		snprintf(vdev->name, sizeof(vdev->name), "%s-capture-%u", pipe->cfg.name, reader);
	else
		snprintf(vdev->name, sizeof(vdev->name), "%s-capture", pipe->cfg.name);
	vdev->fops = &vstream_fops;
	vdev->ioctl_ops = output ? &vstream_out_ioctl_ops : &vstream_cap_ioctl_ops;
	/* the pipe is freed with its v4l2_device, see vstream_pipe_release() */
	vdev->release = video_device_release_empty;
	vdev->v4l2_dev = &pipe->v4l2_dev;
	vdev->queue = &node->queue;
	vdev->lock = &pipe->lock;
	vdev->vfl_dir = output ? VFL_DIR_TX : VFL_DIR_RX;
	vdev->device_caps = V4L2_CAP_STREAMING | V4L2_CAP_READWRITE;
	if (pipe->cfg.mplane)
		vdev->device_caps |= output ? V4L2_CAP_VIDEO_OUTPUT_MPLANE :
				      V4L2_CAP_VIDEO_CAPTURE_MPLANE;
	else
		vdev->device_caps |= output ? V4L2_CAP_VIDEO_OUTPUT :
				      V4L2_CAP_VIDEO_CAPTURE;
	/* created with the device, before its uevent: udev never misses it */
	vdev->dev.groups = vstream_node_groups;
	video_set_drvdata(vdev, node);
	return 0;

free_ctrls:
	v4l2_ctrl_handler_free(&node->ctrls);
	return ret;
}

static void vstream_node_cleanup(struct vstream_node *node)
{
	if (!node->pipe)
		return;
	if (!node->output)
		tpg_free(&node->tpg);
	v4l2_ctrl_handler_free(&node->ctrls);
}

/* The last video device is gone: nothing can reach the pipe any more. */
static void vstream_pipe_release(struct v4l2_device *v4l2_dev)
{
	struct vstream_pipe *pipe = container_of(v4l2_dev, struct vstream_pipe, v4l2_dev);
	unsigned int i;

	vstream_node_cleanup(&pipe->out);
	for (i = 0; i < pipe->readers; i++)
		vstream_node_cleanup(&pipe->cap[i]);
	vstream_pipe_forget_last(pipe);
	vstream_mem_drain(pipe);
	ida_free(&vstream_ids, pipe->id);
	kfree(pipe);
}

/**
 * vstream_pipe_destroy() - unregister a pipe's nodes
 * @pipe: the pipe
 *
 * As a camera that is unplugged: streaming stops, open file handles get
 * ENODEV until closed, mappings stay valid until unmapped.  The pipe
 * itself goes with its last file handle.
 */
void vstream_pipe_destroy(struct vstream_pipe *pipe)
{
	unsigned int i;

	/* vb2's variant also stops streaming and frees the queues */
	vb2_video_unregister_device(&pipe->out.vdev);
	for (i = 0; i < pipe->readers; i++)
		vb2_video_unregister_device(&pipe->cap[i].vdev);
	vstream_pipe_stop_thread(pipe);
	v4l2_device_unregister(&pipe->v4l2_dev);
	v4l2_device_put(&pipe->v4l2_dev);
}

/**
 * vstream_name_valid() - whether @name may name a runtime pipe
 * @name: the configfs directory name
 *
 * It becomes part of node and udev names: 1 to 20 ASCII letters, digits,
 * '-' and '_', starting with a letter or digit, and not "vstream-<N>".
 *
 * Return: true if it may.
 */
bool vstream_name_valid(const char *name)
{
	size_t len = strlen(name);
	unsigned int n;
	const char *p;
	char c;

	/* ASCII: the kernel's isalnum() takes Latin-1 letters too */
	if (!len || len > VSTREAM_NAME_MAX || !isascii(name[0]) || !isalnum(name[0]))
		return false;
	for (p = name; *p; p++)
		if (!isascii(*p) || (!isalnum(*p) && *p != '-' && *p != '_'))
			return false;
	/* "vstream-N" is module parameter pipe N's */
	return sscanf(name, "vstream-%u%c", &n, &c) != 1;
}

/**
 * vstream_check_config() - validate a pipe description
 * @cfg: the description
 *
 * Return: 0, or -EINVAL for a reader count or limits out of range, or a
 * fixed format larger than the limits.
 */
int vstream_check_config(const struct vstream_pipe_config *cfg)
{
	if (!cfg->readers || cfg->readers > VSTREAM_MAX_READERS ||
	    cfg->max_width < VSTREAM_MIN_SIZE || cfg->max_width > 16384 ||
	    cfg->max_height < VSTREAM_MIN_SIZE || cfg->max_height > 16384)
		return -EINVAL;
	if (cfg->fixed && (cfg->fixed_width > cfg->max_width ||
			   cfg->fixed_height > cfg->max_height))
		return -EINVAL;
	return 0;
}

/**
 * vstream_pipe_create() - make a pipe and register its nodes
 * @cfg: the description, checked with vstream_check_config()
 *
 * Return: the pipe, or ERR_PTR(): -EINVAL for a bad @cfg, -EBUSY when
 * every pipe id is taken, -ENOMEM, or what registering the nodes failed
 * with (-ENFILE: no /dev/videoN number free).
 */
struct vstream_pipe *vstream_pipe_create(const struct vstream_pipe_config *cfg)
{
	struct vstream_pipe *pipe;
	unsigned int i;
	int ret, id;

	ret = vstream_check_config(cfg);
	if (ret)
		return ERR_PTR(ret);
	id = ida_alloc_max(&vstream_ids, VSTREAM_MAX_IDS - 1, GFP_KERNEL);
	if (id < 0)
		return ERR_PTR(id == -ENOSPC ? -EBUSY : id);
	pipe = kzalloc(sizeof(*pipe), GFP_KERNEL);
	if (!pipe) {
		ida_free(&vstream_ids, id);
		return ERR_PTR(-ENOMEM);
	}
	pipe->id = id;
	pipe->cfg = *cfg;
	pipe->cfg.video_nr = NULL;
	if (!pipe->cfg.label[0])
		strscpy(pipe->cfg.label, cfg->name, sizeof(pipe->cfg.label));
	pipe->readers = cfg->readers;
	mutex_init(&pipe->lock);
	init_waitqueue_head(&pipe->wait);
	INIT_LIST_HEAD(&pipe->done);
	spin_lock_init(&pipe->spare_lock);
	INIT_LIST_HEAD(&pipe->spare);
	strscpy(pipe->v4l2_dev.name, pipe->cfg.name, sizeof(pipe->v4l2_dev.name));
	ret = v4l2_device_register(&vstream_pdev.dev, &pipe->v4l2_dev);
	if (ret) {
		ida_free(&vstream_ids, id);
		kfree(pipe);
		return ERR_PTR(ret);
	}
	pipe->v4l2_dev.release = vstream_pipe_release;

	ret = vstream_node_init(pipe, &pipe->out, true, 0);
	for (i = 0; !ret && i < pipe->readers; i++)
		ret = vstream_node_init(pipe, &pipe->cap[i], false, i);
	if (!ret)
		ret = vstream_pipe_start_thread(pipe);
	if (!ret)
		ret = video_register_device(&pipe->out.vdev, VFL_TYPE_VIDEO,
					    cfg->video_nr ? cfg->video_nr[0] : -1);
	for (i = 0; !ret && i < pipe->readers; i++)
		ret = video_register_device(&pipe->cap[i].vdev, VFL_TYPE_VIDEO,
					    cfg->video_nr ? cfg->video_nr[1 + i] : -1);
	if (ret) {
		vstream_pipe_destroy(pipe);
		return ERR_PTR(ret);
	}
	v4l2_info(&pipe->v4l2_dev, "output %s, %u reader(s) from %s\n",
		  video_device_node_name(&pipe->out.vdev), pipe->readers,
		  video_device_node_name(&pipe->cap[0].vdev));
	return pipe;
}

static void vstream_remove(struct platform_device *pdev)
{
	unsigned int i;

	for (i = 0; i < VSTREAM_MAX_PIPES; i++) {
		if (vstream_pipes[i])
			vstream_pipe_destroy(vstream_pipes[i]);
		vstream_pipes[i] = NULL;
	}
}

/* Module parameter pipe @i. */
static int vstream_param_pipe(unsigned int i)
{
	struct vstream_pipe_config cfg = {
		.readers = readers,
		.max_width = vstream_max_width,
		.max_height = vstream_max_height,
		.video_nr = &video_nr[i * (1 + readers)],
		.mplane = mplane[i],
	};
	struct vstream_pipe *pipe;

	snprintf(cfg.name, sizeof(cfg.name), "vstream-%u", i);
	if (card_label[i] && card_label[i][0])
		strscpy(cfg.label, card_label[i], sizeof(cfg.label));
	else
		snprintf(cfg.label, sizeof(cfg.label), "vstream %u", i);
	pipe = vstream_pipe_create(&cfg);
	if (IS_ERR(pipe))
		return PTR_ERR(pipe);
	vstream_pipes[i] = pipe;
	return 0;
}

static int vstream_probe(struct platform_device *pdev)
{
	const struct font_desc *font = find_font("VGA8x16");
	unsigned int i;
	int ret = 0;

	if (font)
		tpg_set_font(font->data);
	for (i = 0; !ret && i < pipes; i++)
		ret = vstream_param_pipe(i);
	if (ret)
		vstream_remove(pdev);
	vstream_probe_err = ret;
	return ret;
}

static VSTREAM_REMOVE_RET vstream_platform_remove(struct platform_device *pdev)
{
	vstream_remove(pdev);
	return VSTREAM_REMOVE_OK;
}

static struct platform_driver vstream_pdrv = {
	.probe		= vstream_probe,
	.remove		= vstream_platform_remove,
	.driver		= {
		.name	= VSTREAM_NAME,
		/* Nodes live as long as the module: no unbind from sysfs. */
		.suppress_bind_attrs = true,
	},
};

static int __init vstream_init(void)
{
	int ret;

	if (pipes > VSTREAM_MAX_PIPES || !readers ||
	    readers > VSTREAM_MAX_READERS || vstream_min_buffers < 2 ||
	    vstream_min_buffers > VSTREAM_MAX_BUFFERS ||
	    vstream_max_width < VSTREAM_MIN_SIZE || vstream_max_width > 16384 ||
	    vstream_max_height < VSTREAM_MIN_SIZE || vstream_max_height > 16384) {
		pr_err("vstream: parameter out of range\n");
		return -EINVAL;
	}
	/*
	 * A frame is mapped at different addresses in the kernel and in each
	 * process, written through one and read through the others without
	 * a cache flush: only right where data caches do not alias.
	 */
	if (vstream_dcache_aliasing()) {
		pr_err("vstream: not supported on CPUs whose data caches alias\n");
		return -ENODEV;
	}
	ret = vstream_mem_init();
	if (ret)
		return ret;
	ret = platform_device_register(&vstream_pdev);
	if (ret)
		goto exit_mem;
	ret = platform_driver_register(&vstream_pdrv);
	if (ret)
		goto unregister_device;
	/* probe ran synchronously: fail the load instead of having no nodes */
	ret = vstream_probe_err;
	if (ret) {
		pr_err("vstream: creating the pipes failed (%d)\n", ret);
		goto unregister_driver;
	}
	ret = vstream_configfs_init();
	if (!ret)
		return 0;
	pr_err("vstream: registering with configfs failed (%d)\n", ret);
unregister_driver:
	platform_driver_unregister(&vstream_pdrv);
unregister_device:
	platform_device_unregister(&vstream_pdev);
exit_mem:
	vstream_mem_exit();
	return ret;
}

static void __exit vstream_exit(void)
{
	vstream_configfs_exit();
	platform_driver_unregister(&vstream_pdrv);
	platform_device_unregister(&vstream_pdev);
	vstream_mem_exit();
}

module_init(vstream_init);
module_exit(vstream_exit);

MODULE_DESCRIPTION("Virtual V4L2 streaming pipes: output nodes feeding capture nodes");
MODULE_AUTHOR("The vstream developers");
MODULE_LICENSE("GPL");
#ifdef VSTREAM_VERSION	/* built outside the kernel tree (Kbuild) */
MODULE_VERSION(VSTREAM_VERSION);
#endif
