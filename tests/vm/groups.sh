# The groups that move, share and free frame memory through the driver
# with raw ioctls (tests/vm/vs-loopback.c, vs-hostile.c, vs-isolate.c),
# libc only: run by the vm suite (suite.sh) and, as static arm64
# programs, by the arm64 guest (arm64.sh).  The caller has sourced lib.sh
# and loaded vstream.ko pipes=2 readers=2; B holds tests/vm/vs-*.
# Usage: memory_groups (OUT0 CAP00 CAP01 OUT1 CAP10 set)

memory_groups() {
	# End to end: every byte, field and memory type through the pipe.
	LB=$B/tests/vm/vs-loopback
	for mem in mmap:mmap userptr:mmap mmap:userptr dmabuf:mmap mmap:dmabuf userptr:dmabuf; do
		o=${mem%:*}; c=${mem#*:}
		# MMAP on both sides shares memory: no copy; anything else: one
		z=one; [ $mem = mmap:mmap ] && z=zero
		run "loopback YUYV 320x240 out=$o cap=$c, $z copy" $LB -o $OUT0 -c $CAP00 -f YUYV \
			-s 320x240 -O $o -C $c -y $OUT1 -x $CAP10 -n 20 -Z $z
	done
	# USERPTR memory that is another node's mapped MMAP buffers: the pipe's
	# mappings are ordinary pages, so get_user_pages() imports them (a capture
	# buffer read by an output queue; an output buffer written by a capture one)
	run "loopback out=USERPTR of a capture node's mapped buffers, one copy" $LB -o $OUT0 \
		-c $CAP00 -f YUYV -s 320x240 -O mapped -y $CAP10 -n 20 -Z one
	run "loopback cap=USERPTR of an output node's mapped buffers, one copy" $LB -o $OUT0 \
		-c $CAP00 -f YUYV -s 320x240 -C mapped -x $OUT1 -n 20 -Z one
	for f in none top bottom interlaced seq_tb seq_bt alternate interlaced_tb interlaced_bt; do
		run "loopback field $f" $LB -o $OUT0 -c $CAP00 -f UYVY -s 320x240 -F $f -n 16 -Z zero
	done
	for fmt in NV12 YU12 422P GREY RGB3 XR24 AB24 RGBP MJPG; do
		run "loopback format $fmt" $LB -o $OUT0 -c $CAP01 -f $fmt -s 640x480 -n 10 -Z zero
	done

	# Hostile input (tests/vm/vs-hostile): clean errnos, no crash or hang,
	# then the pipe must still carry every byte without a copy.
	HB=$B/tests/vm/vs-hostile
	for g in buffers fresh userptr mmap mount race formats lifecycle stress fuzz; do
		run "hostile: $g" $HB -o $OUT0 -c $CAP00 -x $CAP01 -g $g -t 30
		sed -n 's/^vs-hostile: /# /p' $LOG/$n.log
	done
	run "pipe streams after the hostile tests" $LB -o $OUT0 -c $CAP00 -f YUYV -s 320x240 -n 20 -Z zero

	# Isolation (tests/vm/vs-isolate): no reader holds up the producer or
	# another reader, and a dequeued frame never changes.
	IB=$B/tests/vm/vs-isolate
	run "isolation: a reader holding every buffer, SIGSTOPped, slows nobody" \
		$IB -o $OUT0 -c $CAP00 -c $CAP01 -g frozen
	run "isolation: a dequeued frame never changes (STREAMOFF, REQBUFS(0), producer gone, peer writes)" \
		$IB -o $OUT0 -c $CAP00 -c $CAP01 -g stable
	run "isolation: a producer writing its buffers after QBUF changes no frame a reader gets" \
		$IB -o $OUT0 -c $CAP00 -g paced
	run "idle frames: a reader that held every buffer gets one at once after QBUF" \
		$IB -o $OUT0 -c $CAP00 -g idle
	run "Producer Timeout: idle frames in each silence, the second after the reader had none queued" \
		$IB -o $OUT0 -c $CAP00 -g silence
}
