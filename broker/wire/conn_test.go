package wire_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/wire"
	"github.com/fjordhq/fjord/internal/testkit"
)

// TestPipelinedRequests sends flexible and non-flexible requests
// concurrently on one connection to a real broker and checks every answer
// decodes and belongs to its request.
func TestPipelinedRequests(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := wire.Dial(ctx, b.Addr, "wire-test")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	create := kmsg.NewPtrCreateTopicsRequest()
	create.SetVersion(7)
	ct := kmsg.NewCreateTopicsRequestTopic()
	ct.Topic, ct.NumPartitions, ct.ReplicationFactor = "wired", 3, 1
	create.Topics = append(create.Topics, ct)
	resp, err := c.Request(ctx, create)
	if err != nil {
		t.Fatal(err)
	}
	if code := resp.(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode; code != 0 {
		t.Fatalf("create: %v", kerr.ErrorForCode(code))
	}

	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var req kmsg.Request
			switch i % 3 {
			case 0:
				r := kmsg.NewPtrMetadataRequest()
				r.SetVersion(int16(9 + i%4)) // flexible
				rt := kmsg.NewMetadataRequestTopic()
				rt.Topic = kmsg.StringPtr("wired")
				r.Topics = append(r.Topics, rt)
				req = r
			case 1:
				r := kmsg.NewPtrMetadataRequest()
				r.SetVersion(int16(1 + i%7)) // not flexible
				rt := kmsg.NewMetadataRequestTopic()
				rt.Topic = kmsg.StringPtr("wired")
				r.Topics = append(r.Topics, rt)
				req = r
			default:
				r := kmsg.NewPtrApiVersionsRequest()
				r.SetVersion(3)
				req = r
			}
			resp, err := c.Request(ctx, req)
			if err != nil {
				t.Error(err)
				return
			}
			switch r := resp.(type) {
			case *kmsg.MetadataResponse:
				if len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 3 {
					t.Errorf("metadata v%d: %d topics", r.Version, len(r.Topics))
				}
			case *kmsg.ApiVersionsResponse:
				if r.ErrorCode != 0 || len(r.ApiKeys) < 10 {
					t.Errorf("api versions: code %d, %d keys", r.ErrorCode, len(r.ApiKeys))
				}
			}
		}()
	}
	wg.Wait()
}

// TestAbandonedRequestBreaksConn: a request whose context ends closes the
// connection, and later requests fail fast instead of reading a stale answer.
func TestAbandonedRequestBreaksConn(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	c, err := wire.Dial(context.Background(), b.Addr, "wire-test")
	if err != nil {
		t.Fatal(err)
	}
	// A fetch that long-polls 5 s on an empty topic, abandoned after 50 ms.
	if _, err := testkit.Admin(t, b.Addr).CreateTopic(context.Background(), 1, 1, nil, "idle"); err != nil {
		t.Fatal(err)
	}
	f := kmsg.NewPtrFetchRequest()
	f.SetVersion(12)
	f.MaxWaitMillis, f.MinBytes, f.MaxBytes = 5000, 1, 1<<20
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = "idle"
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.PartitionMaxBytes = 1 << 20
	ft.Partitions = append(ft.Partitions, fp)
	f.Topics = append(f.Topics, ft)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := c.Request(ctx, f); err == nil {
		t.Fatal("abandoned fetch returned no error")
	}
	if time.Since(start) > 2*time.Second {
		t.Fatalf("abandoned request took %v", time.Since(start))
	}
	if !c.Broken() {
		t.Fatal("connection still usable after an abandoned request")
	}
	r := kmsg.NewPtrApiVersionsRequest()
	r.SetVersion(3)
	if _, err := c.Request(context.Background(), r); err == nil {
		t.Fatal("request on a broken connection succeeded")
	}
}
