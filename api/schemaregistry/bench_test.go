package schemaregistry

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fjordhq/fjord/internal/testkit"
)

// Registrations of new schemas (each a NOOP round trip and a record
// appended with acks=all and read back), and lookups of known ones.
func BenchmarkRegisterKafka(b *testing.B) {
	br := testkit.StartBroker(b, nil)
	srv, err := New(Config{Bootstrap: []string{br.Addr}, Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	ctx := testkit.Context(b, 5*time.Minute)
	if err := srv.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	if _, err := srv.WaitLeader(ctx); err != nil {
		b.Fatal(err)
	}
	r := srv.Registry()
	if _, err := r.SetConfig(ctx, "", None); err != nil {
		b.Fatal(err)
	}
	b.Run("new", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			if _, err := r.Register(ctx, "s", RegisterRequest{Schema: fmt.Sprintf(`{"type":"fixed","name":"F%d","size":1}`, i)}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("existing", func(b *testing.B) {
		for b.Loop() {
			if _, err := r.Register(context.Background(), "s", RegisterRequest{Schema: `{"type":"fixed","name":"F1","size":1}`}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
