package json

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fjordhq/fjord/connect"
)

// boxRecord is a struct with a field of every type decoded into the
// shared blocks, made distinct by i.
func boxRecord(i int) (*connect.Schema, *connect.Struct) {
	s := connect.NewStruct().Name("box").
		Field("i8", connect.Int8Schema).
		Field("i16", connect.Int16Schema).
		Field("i32", connect.Int32Schema).
		Field("i64", connect.Int64Schema).
		Field("f32", connect.Float32Schema).
		Field("f64", connect.Float64Schema).
		Field("ts", connect.TimestampSchema().Build()).
		Field("s", connect.StringSchema).
		Field("esc", connect.StringSchema).
		Field("long", connect.StringSchema).
		Build()
	v := connect.NewStructValue(s).
		MustPut("i8", int8(i)).
		MustPut("i16", int16(i*3)).
		MustPut("i32", int32(i*7)).
		MustPut("i64", int64(i)*1e12).
		MustPut("f32", float32(i)/4).
		MustPut("f64", float64(i)/8).
		MustPut("ts", time.UnixMilli(1700000000000+int64(i)).UTC()).
		MustPut("s", fmt.Sprint("value-", i)).
		MustPut("esc", fmt.Sprintf("q\"%d\"\n", i)).
		MustPut("long", strings.Repeat(fmt.Sprint(i%10), 2000+i%7))
	return s, v
}

// TestDecodedValuesStay: values decoded into shared blocks keep their
// values while later records fill the blocks (and new blocks).
func TestDecodedValuesStay(t *testing.T) {
	c := configured(t, "")
	const n = 3000
	got := make([]any, n)
	for i := range n {
		s, v := boxRecord(i)
		b, err := c.FromConnectData("t", nil, s, v)
		if err != nil {
			t.Fatal(err)
		}
		if _, got[i], err = c.ToConnectData("t", nil, b); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		_, want := boxRecord(i)
		if !want.Equal(got[i].(*connect.Struct)) {
			t.Fatalf("record %d decoded as %v, want %v", i, got[i], want)
		}
	}
}

// TestDecodeConcurrently: one converter decoding on several goroutines
// (run with -race).
func TestDecodeConcurrently(t *testing.T) {
	c := configured(t, "")
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := g; i < 2000; i += 4 {
				s, want := boxRecord(i)
				b, err := c.FromConnectData("t", nil, s, want)
				if err != nil {
					t.Error(err)
					return
				}
				_, v, err := c.ToConnectData("t", nil, b)
				if err != nil || !want.Equal(v.(*connect.Struct)) {
					t.Errorf("record %d: %v %v", i, v, err)
					return
				}
			}
		})
	}
	wg.Wait()
}
