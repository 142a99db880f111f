package bench

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// rawPhase runs `fjord bench consume` on the source topic: franz-go with
// its defaults, a process of its own, from the start of every partition,
// timed inside from client creation to the last record.
func (x *mirrorBench) rawPhase(ctx context.Context) (MirrorSample, error) {
	cfg := x.cfg
	x.settle(ctx)
	queued := runQueueWait(x.src.pid())
	res, err := runDriver(ctx, Config{Self: cfg.Self, Env: cfg.Env, DriverTimeout: cfg.PhaseTimeout}, "consume", []string{
		"--brokers", cfg.SourceAddr, "--topic", mirrorTopic,
		"--records", strconv.Itoa(cfg.Records), "--warmup", "0", "--size", strconv.Itoa(cfg.Size),
		"--timeout", cfg.PhaseTimeout.String(),
	})
	end := time.Now()
	if err != nil {
		return MirrorSample{}, err
	}
	// The driver timed itself; the broker's CPU is read over the same
	// window, ending when the driver exited.
	start := end.Add(-time.Duration(res.Seconds * float64(time.Second)))
	queued = runQueueWait(x.src.pid()) - queued
	return MirrorSample{
		Records: res.Records, Seconds: res.Seconds, SteadyRecords: res.Records, SteadySeconds: res.Seconds,
		ProcessCPUSeconds: res.ClientCPU * res.Seconds, SourceCPUSeconds: x.srcCPU.between(start, end).Seconds(),
		RunQueueSeconds: max(queued.Seconds(), 0),
	}, nil
}

// throughputPhase starts a mirror on a fresh flow of the source topic and
// times it from the process start until the remote topic's end offsets
// sum to Records (listed every Poll), then stops it.
func (x *mirrorBench) throughputPhase(ctx context.Context, column string) (MirrorSample, error) {
	cfg := x.cfg
	f := newMirrorFlow(column, MirrorPhaseThroughput, x.run, mirrorTopic)
	remote := f.remoteTopic()
	want := int64(cfg.Records)
	x.settle(ctx)

	proc, start, err := x.startMirror(column, f)
	if err != nil {
		return MirrorSample{}, err
	}
	defer x.dropTopic(x.dstAdm, remote)
	defer proc.stop(cfg.StopGrace)
	cpu := startCPUSampler(proc.pid(), 10*time.Millisecond)
	defer cpu.stop()
	queued := runQueueWait(proc.pid()) + runQueueWait(x.src.pid()) + runQueueWait(x.dst.pid())

	var (
		got, firstGot int64
		first, end    time.Time
		lerr          error
		lastLog       = start
	)
	deadline := start.Add(cfg.PhaseTimeout)
	for {
		n, err := remoteEnd(ctx, x.dstAdm, remote)
		now := time.Now()
		if err != nil {
			lerr = err
		} else {
			got = n
		}
		if got > 0 && first.IsZero() {
			first, firstGot = now, got
		}
		if got >= want {
			end = now
			break
		}
		if err := mirrorAlive(column, proc); err != nil {
			return MirrorSample{}, err
		}
		if err := x.alive(); err != nil {
			return MirrorSample{}, err
		}
		if now.Sub(lastLog) > 5*time.Second {
			lastLog = now
			cfg.Log.Info("waiting for the mirror", "mirror", column, "topic", remote, "records", got, "of", want)
		}
		if now.After(deadline) {
			return MirrorSample{}, fmt.Errorf("%d of %d records on %s after %s (last listing error: %v): %s",
				got, want, remote, cfg.PhaseTimeout, lerr, logTail(proc.logPath))
		}
		if !sleepCtx(ctx, cfg.Poll) { // the end offsets are the only progress a mirror shows outside
			return MirrorSample{}, ctx.Err()
		}
	}
	// Queued time is read before the mirror stops: its threads vanish
	// with it.
	queued = runQueueWait(proc.pid()) + runQueueWait(x.src.pid()) + runQueueWait(x.dst.pid()) - queued
	s := MirrorSample{
		Records: got, Seconds: max(end.Sub(start).Seconds(), 1e-9), FirstMs: ms(first.Sub(start)),
		SteadyRecords: got - firstGot, SteadySeconds: end.Sub(first).Seconds(),
		ProcessCPUSeconds: cpu.between(start, end).Seconds(),
		SourceCPUSeconds:  x.srcCPU.between(start, end).Seconds(), TargetCPUSeconds: x.dstCPU.between(start, end).Seconds(),
		RunQueueSeconds: max(queued.Seconds(), 0),
	}
	if got != want {
		return MirrorSample{}, fmt.Errorf("%s holds %d records, the source %d: duplicates", remote, got, want)
	}
	proc.stop(cfg.StopGrace)
	if !x.verified[column] {
		v, err := verifyMirrored(ctx, cfg.SourceAddr, cfg.TargetAddr, mirrorTopic, remote, cfg.Partitions, cfg.PhaseTimeout)
		if err != nil {
			return MirrorSample{}, fmt.Errorf("check the copy: %w", err)
		}
		if x.verified == nil {
			x.verified = map[string]bool{}
		}
		x.verified[column] = true
		x.rep.Verified = append(x.rep.Verified, mirrorColumnName(column)+": "+v)
	}
	return s, nil
}

// remoteEnd is the sum of a topic's end offsets: the records in it, for a
// topic nothing was deleted from. A topic that does not exist yet holds 0
// and is not an error; a partition that cannot be listed is.
func remoteEnd(ctx context.Context, adm *kadm.Client, topic string) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	offs, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return 0, err
	}
	var (
		sum  int64
		perr error
	)
	offs.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			perr = fmt.Errorf("%s[%d]: %w", o.Topic, o.Partition, o.Err)
			return
		}
		sum += o.Offset
	})
	return sum, perr
}

// remotePartitions is how many partitions of topic list their end
// offsets without an error.
func remotePartitions(ctx context.Context, adm *kadm.Client, topic string) int {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	offs, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return 0
	}
	n := 0
	offs.Each(func(o kadm.ListedOffset) {
		if o.Err == nil {
			n++
		}
	})
	return n
}
