#!/bin/sh
# A camera from the network: RTP (pipelines/rtp-send.sh on another
# machine) received on PORT and fed to a vstream output node, so browsers
# and other readers of its capture node see the sender's video.
#   pipelines/rtp-camera.sh OUT [PORT]
# CODEC=raw (the default: WIDTH, HEIGHT are the sender's) or h264 (any
# size the sender sends; readers get WIDTHxHEIGHT, default 320x240).
# LATENCY: the jitter buffer's, in ms (50).  FORMAT: the pipe's pixel
# format (YUY2; UYVY takes raw RTP's 4:2:2 as it comes).
# The depayloader says framerate=0/1 (frames come as the network brings
# them): vstreamsink takes that as it is, no videorate needed.  When the
# sender stops, readers get the pipe's idle frames once no frame came for
# TIMEOUT ms (1000: the output's Producer Timeout; test pattern or last
# frame, as the readers' "Frames Without Producer" control says) and the
# picture returns with the sender, readers never reopening.
OUT=${1:?usage: rtp-camera.sh OUT [PORT]}
PORT=${2:-5004}
W=${WIDTH:-320} H=${HEIGHT:-240}
CAPS="application/x-rtp,media=video,clock-rate=90000,payload=96"
case ${CODEC:-raw} in
raw)
	CAPS="$CAPS,encoding-name=RAW,sampling=YCbCr-4:2:2,depth=(string)8"
	CAPS="$CAPS,width=(string)$W,height=(string)$H,colorimetry=(string)BT601-5"
	DEC="rtpvrawdepay" ;;
h264)
	CAPS="$CAPS,encoding-name=H264"
	DEC="rtph264depay ! h264parse ! avdec_h264 ! videoscale ! video/x-raw,width=$W,height=$H" ;;
*) echo "rtp-camera.sh: CODEC is raw or h264" >&2; exit 2 ;;
esac
exec gst-launch-1.0 -q udpsrc port=$PORT caps="$CAPS" ! \
	rtpjitterbuffer latency=${LATENCY:-50} ! $DEC ! videoconvert ! \
	video/x-raw,format=${FORMAT:-YUY2} ! vstreamsink device="$OUT" sync=false \
	extra-controls="c,producer_timeout_ms=${TIMEOUT:-1000}"
