package avro

import (
	"fmt"
	"sync"
	"testing"

	"github.com/fjordhq/fjord/connect"
)

// TestConcurrentUse: one converter encoding and decoding on several
// goroutines, over two topics (run with -race), as a sink converting a
// batch in parallel does.
func TestConcurrentUse(t *testing.T) {
	_, url := registry(t)
	conv := NewConverter()
	if err := conv.Configure(map[string]string{KeyRegistryURL: url}, false); err != nil {
		t.Fatal(err)
	}
	s, _ := benchRecord()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 200 {
				topic := fmt.Sprint("users-", (g+i)%2)
				v := connect.NewStructValue(s).MustPut("registertime", int64(i)).MustPut("userid", fmt.Sprint("User_", g, i)).
					MustPut("regionid", "Region_5").MustPut("gender", "MALE").MustPut("score", nil).MustPut("tags", []any{"a"})
				msg, err := conv.FromConnectData(topic, nil, s, v)
				if err != nil {
					t.Error(err)
					return
				}
				_, got, err := conv.ToConnectData(topic, nil, msg)
				if err != nil {
					t.Error(err)
					return
				}
				if st := got.(*connect.Struct); st.GetFieldWithoutDefault(st.Schema().Field("userid")) != fmt.Sprint("User_", g, i) {
					t.Errorf("decoded %v", got)
					return
				}
			}
		})
	}
	wg.Wait()
}
