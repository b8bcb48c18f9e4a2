// SPDX-License-Identifier: GPL-2.0
/*
 * Controls of capture nodes: the test pattern and what readers get while
 * no producer streams.  The output node's one control says how long its
 * producer may queue nothing before readers get those frames meanwhile.
 * There are no MIN_BUFFERS_FOR_* controls: since v4l2-compliance 1.30
 * only stateful codecs may have them; REQBUFS grants at least min_buffers
 * instead, and says so in its count.
 */

#include <media/v4l2-ctrls.h>

#include "vstream.h"

static const char * const vstream_idle_menu[] = {
	"Test Pattern",
	"Last Frame",
	NULL,
};

static int vstream_s_ctrl(struct v4l2_ctrl *ctrl)
{
	struct vstream_node *node = container_of(ctrl->handler, struct vstream_node, ctrls);
	struct vstream_pipe *pipe = node->pipe;
	unsigned int i;

	/* Entered with pipe->lock held, so the pipe thread is between rounds. */
	switch (ctrl->id) {
	case V4L2_CID_TEST_PATTERN:
		tpg_s_pattern(&node->tpg, ctrl->val);
		break;
	case VSTREAM_CID_IDLE_MODE:
		node->idle_mode = ctrl->val;
		pipe->keep_last = false;
		for (i = 0; i < pipe->readers; i++)
			if (pipe->cap[i].idle_mode == VSTREAM_IDLE_LAST)
				pipe->keep_last = true;
		if (!pipe->keep_last)
			vstream_pipe_forget_last(pipe);
		break;
	case VSTREAM_CID_PRODUCER_TIMEOUT:
		node->timeout_ns = (u64)ctrl->val * NSEC_PER_MSEC;
		vstream_pipe_kick(pipe);
		break;
	}
	return 0;
}

static const struct v4l2_ctrl_ops vstream_ctrl_ops = {
	.s_ctrl = vstream_s_ctrl,
};

static const struct v4l2_ctrl_config vstream_ctrl_idle = {
	.ops = &vstream_ctrl_ops,
	.id = VSTREAM_CID_IDLE_MODE,
	.name = "Frames Without Producer",
	.type = V4L2_CTRL_TYPE_MENU,
	.max = VSTREAM_IDLE_LAST,
	.def = VSTREAM_IDLE_PATTERN,
	.qmenu = vstream_idle_menu,
};

/*
 * 0 (the default): readers wait for a streaming producer however long it
 * is silent, as a screen capture of a still desktop needs.  A network
 * receiver sets it, so a sender gone shows as one.
 */
static const struct v4l2_ctrl_config vstream_ctrl_timeout = {
	.ops = &vstream_ctrl_ops,
	.id = VSTREAM_CID_PRODUCER_TIMEOUT,
	.name = "Producer Timeout ms",
	.type = V4L2_CTRL_TYPE_INTEGER,
	.max = 60000,
	.step = 1,
};

/**
 * vstream_ctrls_init() - a node's controls
 * @node: the node
 *
 * Capture nodes: Test Pattern and Frames Without Producer; the output
 * node: Producer Timeout ms.
 *
 * Return: 0, or the control handler's error.
 */
int vstream_ctrls_init(struct vstream_node *node)
{
	struct v4l2_ctrl_handler *hdl = &node->ctrls;

	v4l2_ctrl_handler_init(hdl, 2);
	if (!node->output) {
		node->ctrl_pattern =
			v4l2_ctrl_new_std_menu_items(hdl, &vstream_ctrl_ops,
						     V4L2_CID_TEST_PATTERN,
						     TPG_PAT_NOISE, 0, TPG_PAT_75_COLORBAR,
						     tpg_pattern_strings);
		node->ctrl_idle = v4l2_ctrl_new_custom(hdl, &vstream_ctrl_idle, NULL);
	} else {
		v4l2_ctrl_new_custom(hdl, &vstream_ctrl_timeout, NULL);
	}
	if (hdl->error) {
		int err = hdl->error;

		v4l2_ctrl_handler_free(hdl);
		return err;
	}
	node->vdev.ctrl_handler = hdl;
	return 0;
}
