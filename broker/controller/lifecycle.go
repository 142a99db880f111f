package controller

// BrokerLifecycle is a broker's side of registration and liveness, as
// Kafka's BrokerLifecycleManager:
//
//  1. register (BrokerRegistration) until the active controller answers
//     with an epoch — the registration record's offset;
//  2. heartbeat every broker.heartbeat.interval.ms, asking to stay fenced
//     until this broker's metadata image has reached its own registration
//     (MetadataOffset() >= epoch): a broker must know the cluster before
//     it leads partitions;
//  3. when the controller forgets the registration (BROKER_ID_NOT_REGISTERED)
//     or has a newer one (STALE_BROKER_EPOCH), register again;
//  4. on ControlledShutdown, heartbeat with WantShutdown until the
//     controller answers ShouldShutdown (it has moved our leaderships).
//
// While the broker waits for something (to be unfenced, to be allowed to
// shut down) it heartbeats faster than the interval, as Kafka schedules
// the next communication immediately in those states: start-up and
// rolling restarts should not cost whole heartbeat intervals.

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// LifecycleOptions configures a BrokerLifecycle.
type LifecycleOptions struct {
	Client       *ControllerClient
	Registration BrokerRegistration
	// HeartbeatInterval is broker.heartbeat.interval.ms (default 2 s).
	HeartbeatInterval time.Duration
	// MetadataOffset is the broker's applied metadata offset (its
	// follower's image offset).
	MetadataOffset func() int64
	Logger         *slog.Logger
	// OnStateChange is called, from the lifecycle goroutine, when the
	// controller's answer changes whether this broker is fenced (it
	// starts fenced; the first call is with false).
	OnStateChange func(fenced bool)
}

// BrokerLifecycle runs registration and heartbeats; see the file comment.
type BrokerLifecycle struct {
	opts   LifecycleOptions
	log    *slog.Logger
	epoch  atomic.Int64
	cancel context.CancelFunc
	done   chan struct{}
	kick   chan struct{}

	shutdownOnce sync.Once
	shutdownReq  chan struct{} // closed by ControlledShutdown
	shutdownDone chan struct{} // closed once ShouldShutdown was answered

	mu       sync.Mutex
	fenced   bool
	unfenced chan struct{} // closed while unfenced
}

// fastHeartbeat is the heartbeat period while waiting to be unfenced or
// to be allowed to shut down.
const fastHeartbeat = 100 * time.Millisecond

// StartBrokerLifecycle starts registering and heartbeating.
func StartBrokerLifecycle(opts LifecycleOptions) *BrokerLifecycle {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.HeartbeatInterval <= 0 {
		opts.HeartbeatInterval = 2 * time.Second
	}
	if opts.MetadataOffset == nil {
		opts.MetadataOffset = func() int64 { return -1 }
	}
	ctx, cancel := context.WithCancel(context.Background())
	l := &BrokerLifecycle{
		opts:         opts,
		log:          opts.Logger.With("broker", opts.Registration.ID),
		cancel:       cancel,
		done:         make(chan struct{}),
		kick:         make(chan struct{}, 1),
		shutdownReq:  make(chan struct{}),
		shutdownDone: make(chan struct{}),
		fenced:       true,
		unfenced:     make(chan struct{}),
	}
	l.epoch.Store(-1)
	go l.run(ctx)
	return l
}

// Epoch is the broker epoch of the current registration, -1 before the
// first registration succeeded.
func (l *BrokerLifecycle) Epoch() int64 { return l.epoch.Load() }

// Fenced reports whether the last heartbeat answer said we are fenced.
func (l *BrokerLifecycle) Fenced() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.fenced
}

// WaitUnfenced returns once the controller has unfenced this broker.
func (l *BrokerLifecycle) WaitUnfenced(ctx context.Context) error {
	l.mu.Lock()
	ch := l.unfenced
	l.mu.Unlock()
	select {
	case <-ch: // checked first: the answer stands after Close
		return nil
	default:
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-l.done:
		return errLifecycleClosed
	}
}

var errLifecycleClosed = errors.New("broker lifecycle closed")

// ControlledShutdown asks the controller to move this broker's
// leaderships away and returns once it says the broker may stop
// (ShouldShutdown), or ctx's error. Heartbeats go on afterwards until
// Close, so the broker stays registered while it finishes.
func (l *BrokerLifecycle) ControlledShutdown(ctx context.Context) error {
	l.shutdownOnce.Do(func() { close(l.shutdownReq) })
	l.poke()
	select {
	case <-l.shutdownDone:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-l.done:
		return errLifecycleClosed
	}
}

// Close stops heartbeating (the controller fences the broker when its
// session expires) and waits for the goroutine to end.
func (l *BrokerLifecycle) Close() {
	l.cancel()
	<-l.done
}

func (l *BrokerLifecycle) poke() {
	select {
	case l.kick <- struct{}{}:
	default:
	}
}

func (l *BrokerLifecycle) shuttingDown() bool {
	select {
	case <-l.shutdownReq:
		return true
	default:
		return false
	}
}

func (l *BrokerLifecycle) setFenced(fenced bool) {
	l.mu.Lock()
	if fenced == l.fenced {
		l.mu.Unlock()
		return
	}
	l.fenced = fenced
	if fenced {
		l.unfenced = make(chan struct{})
	} else {
		close(l.unfenced)
	}
	l.mu.Unlock()
	l.log.Info("broker fencing changed", "fenced", fenced, "epoch", l.Epoch())
	if l.opts.OnStateChange != nil {
		l.opts.OnStateChange(fenced)
	}
}

// sleep waits d, a poke, or the end of ctx (false).
func (l *BrokerLifecycle) sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-l.kick:
		return true
	case <-t.C:
		return true
	}
}

func (l *BrokerLifecycle) run(ctx context.Context) {
	defer close(l.done)
	interval := l.opts.HeartbeatInterval
	// One attempt (with the client's own retries across controllers)
	// lasts at most this long; then we start over with fresh state.
	attempt := max(5*interval, 2*time.Second)
	for ctx.Err() == nil {
		if !l.register(ctx, attempt) {
			return
		}
		for ctx.Err() == nil {
			epoch := l.Epoch()
			hb := BrokerHeartbeat{
				ID:             l.opts.Registration.ID,
				Epoch:          epoch,
				MetadataOffset: l.opts.MetadataOffset(),
				WantShutdown:   l.shuttingDown(),
			}
			hb.WantFence = hb.MetadataOffset < epoch
			actx, cancel := context.WithTimeout(ctx, attempt)
			// One controller gets at most an interval (at least half a
			// second) before the client looks for another: after a
			// controller failover the new controller gives brokers only
			// a failover grace (two intervals, at least a second) to
			// heartbeat it, and a controller that is partitioned away or
			// whose host died does not refuse connections, it hangs them.
			// A healthy controller answers a heartbeat in milliseconds
			// (one raft write at most).
			res, err := l.opts.Client.heartbeat(actx, hb, max(interval, 500*time.Millisecond))
			cancel()
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				if err.Code == kerr.BrokerIDNotRegistered || err.Code == kerr.StaleBrokerEpoch {
					l.log.Warn("controller does not know this registration; registering again", "epoch", epoch, "err", err)
					l.setFenced(true)
					break
				}
				l.log.Warn("broker heartbeat failed", "err", err)
				if !l.sleep(ctx, interval) {
					return
				}
				continue
			}
			l.setFenced(res.IsFenced)
			if hb.WantShutdown && res.ShouldShutdown {
				select {
				case <-l.shutdownDone:
				default:
					close(l.shutdownDone)
				}
			}
			next := interval
			waitingUnfence := res.IsFenced && !hb.WantFence && !hb.WantShutdown
			waitingCatchUp := res.IsFenced && hb.WantFence
			waitingShutdown := l.shuttingDown() && !res.ShouldShutdown
			if waitingUnfence || waitingCatchUp || waitingShutdown {
				next = min(interval, fastHeartbeat)
			}
			if !l.sleep(ctx, next) {
				return
			}
		}
	}
}

// register retries BrokerRegistration until it succeeds (true) or ctx
// ends (false).
func (l *BrokerLifecycle) register(ctx context.Context, attempt time.Duration) bool {
	backoff := retryBackoffMin
	for {
		actx, cancel := context.WithTimeout(ctx, attempt)
		epoch, err := l.opts.Client.RegisterBroker(actx, l.opts.Registration)
		cancel()
		if ctx.Err() != nil {
			return false
		}
		if err == nil {
			l.epoch.Store(epoch)
			l.log.Info("broker registered", "epoch", epoch, "controller", l.opts.Client.ActiveID())
			return true
		}
		// DUPLICATE_BROKER_REGISTRATION (our previous incarnation's
		// session has not expired yet) and the like clear with time.
		l.log.Warn("broker registration failed; retrying", "err", err)
		if !l.sleep(ctx, backoff) {
			return false
		}
		backoff = min(2*backoff, l.opts.HeartbeatInterval)
	}
}
