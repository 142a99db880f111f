package broker

// Client quota enforcement (broker/quota) wired into Produce and Fetch:
// Kafka's ClientQuotaManager for the produce and fetch byte rates
// (producer_byte_rate: request bytes of Produce; consumer_byte_rate:
// response bytes of consumer Fetches, never replica fetches). A client
// over its quota gets throttle_time_ms in the response and its
// connection is not read for that long (protocol.Response.Throttle,
// KIP-219). The quotas are the metadata image's (AlterClientQuotas);
// each request compares the image's quota pointer with the one applied,
// so without quotas the cost is two atomic loads and no allocation.
//
// request_percentage and controller_mutation_rate are stored and
// described but not enforced.

import (
	"context"
	"math"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/controller"
	"github.com/fjordhq/fjord/broker/protocol"
	"github.com/fjordhq/fjord/broker/quota"
)

// brokerQuotas are a broker's quota managers.
type brokerQuotas struct {
	produce, fetch *quota.Manager
}

// newBrokerQuotas reads quota.window.num and quota.window.size.seconds.
func newBrokerQuotas(cfg Config) *brokerQuotas {
	m := quota.NewMetrics(cfg.Registerer)
	qc := quota.Config{
		Samples: int(propInt(cfg.Cluster.StaticConfigs, "quota.window.num", quota.DefaultSamples)),
		Window:  time.Duration(propInt(cfg.Cluster.StaticConfigs, "quota.window.size.seconds", 1)) * time.Second,
	}
	return &brokerQuotas{
		produce: quota.NewManager(controller.QuotaProducerByteRate, "produce", qc, m),
		fetch:   quota.NewManager(controller.QuotaConsumerByteRate, "fetch", qc, m),
	}
}

// throttleProduce charges a produce request's size to its client
// (Kafka: request.sizeInBytes, acks=0 included) and sets the throttle.
func (s *Server) throttleProduce(c *protocol.Conn, req *protocol.Request, resp protocol.Response) protocol.Response {
	m := s.quotas.produce
	m.Update(s.image().ClientQuotas)
	if !m.Active() {
		return resp
	}
	d := m.Record(c.Principal().Name, req.ClientID, float64(req.Size), time.Now(), false)
	if d <= 0 {
		return resp
	}
	if r, ok := resp.Msg.(*kmsg.ProduceResponse); ok {
		// A pending acks=all answer (Wait) writes this same response.
		r.ThrottleMillis = int32(d.Milliseconds())
	}
	resp.Throttle = d
	return resp
}

// fetchQuotaKey carries a consumer fetch's quota client to handleFetch;
// set only while a consumer_byte_rate quota exists.
type fetchQuotaKey struct{}

type fetchQuotaClient struct {
	m              *quota.Manager
	user, clientID string
}

// withFetchQuota returns ctx carrying the fetch's quota client when a
// consumer quota exists (ctx unchanged otherwise).
func (s *Server) withFetchQuota(ctx context.Context, c *protocol.Conn, req *protocol.Request, r *kmsg.FetchRequest) context.Context {
	m := s.quotas.fetch
	m.Update(s.image().ClientQuotas)
	if !m.Active() || isReplicaFetch(r) {
		return ctx
	}
	return context.WithValue(ctx, fetchQuotaKey{}, &fetchQuotaClient{m: m, user: c.Principal().Name, clientID: req.ClientID})
}

func fetchQuotaFrom(ctx context.Context) *fetchQuotaClient {
	q, _ := ctx.Value(fetchQuotaKey{}).(*fetchQuotaClient)
	return q
}

// capMaxBytes lowers a fetch's max_bytes to what the quota allows in one
// window (Kafka's getMaxValueInQuotaWindow), so one answer cannot be
// throttled for longer than the window by itself.
func (q *fetchQuotaClient) capMaxBytes(r *kmsg.FetchRequest) {
	if mx := q.m.MaxValueInWindow(q.user, q.clientID); mx < float64(r.MaxBytes) {
		r.MaxBytes = int32(max(math.Floor(mx), 1))
	}
}

// throttle charges an encoded fetch answer's size; when over quota it
// is taken back and the answer is Kafka's throttled response: no data,
// the throttle time, the node endpoints.
func (q *fetchQuotaClient) throttle(r *kmsg.FetchRequest, resp *kmsg.FetchResponse, parts []protocol.Part) (time.Duration, *kmsg.FetchResponse) {
	size := 0
	for _, p := range parts {
		if p.File != nil {
			size += p.Size
		} else {
			size += len(p.Bytes)
		}
	}
	d := q.m.Record(q.user, q.clientID, float64(size), time.Now(), true)
	if d <= 0 {
		return 0, nil
	}
	empty := r.ResponseKind().(*kmsg.FetchResponse)
	empty.ThrottleMillis = int32(d.Milliseconds())
	empty.Brokers = resp.Brokers
	return d, empty
}
