// Package s3records makes the S3 benchmark's records (fjord bench s3,
// and the S3 sink's Go benchmark, which must measure the same bytes).
package s3records

import "strconv"

// ValueSchema is the S3 benchmark records' schema: an order event of ten
// fields (ids, strings, a double, a Timestamp), written as JsonConverter's
// envelope with its schema, as a Connect source with the worker's default
// converter would have written it. The payload alone is about 280 bytes (what JsonFormat
// writes per line); the envelope about 1 KB.
const ValueSchema = `{"type":"struct","fields":[` +
	`{"type":"int64","optional":false,"field":"id"},` +
	`{"type":"string","optional":false,"field":"order_id"},` +
	`{"type":"int64","optional":false,"field":"customer_id"},` +
	`{"type":"string","optional":false,"field":"customer"},` +
	`{"type":"string","optional":false,"field":"email"},` +
	`{"type":"double","optional":false,"field":"amount"},` +
	`{"type":"string","optional":false,"field":"currency"},` +
	`{"type":"string","optional":false,"field":"status"},` +
	`{"type":"int64","optional":false,"name":"org.apache.kafka.connect.data.Timestamp","version":1,"field":"created_at"},` +
	`{"type":"string","optional":true,"field":"note"}` +
	`],"optional":false,"name":"bench.s3.Order"}`

// Fields are the value's field names, in schema order.
var Fields = []string{"id", "order_id", "customer_id", "customer", "email", "amount", "currency", "status", "created_at", "note"}

var (
	currencies = []string{"EUR", "USD", "GBP", "NOK", "SEK"}
	statuses   = []string{"created", "paid", "packed", "shipped", "delivered", "returned"}
	words      = []string{"express", "gift", "wrap", "leave", "at", "door", "fragile", "handle", "with", "care",
		"call", "before", "delivery", "second", "floor", "back", "entrance", "no", "weekend", "please",
		"invoice", "attached", "customer", "requested", "split", "shipment", "priority", "standard", "reorder", "of", "last", "month"}
)

// CreatedBase is the first record's created_at: 2026-01-01T00:00:00Z.
const CreatedBase = 1767225600000

// mix64 is splitmix64's finaliser: record i's pseudo-random bits, the
// same in every run.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// AppendPayload appends record i's payload (the value without its
// schema) as JSON. The strings need no escaping: they are plain ASCII.
func AppendPayload(b []byte, i int64) []byte {
	h := mix64(uint64(i))
	cust := int64(h%100_000) + 1
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, i, 10)
	b = append(b, `,"order_id":"ord-`...)
	b = appendPadded(b, int64(mix64(h)%10_000_000_000), 10)
	b = append(b, `","customer_id":`...)
	b = strconv.AppendInt(b, cust, 10)
	b = append(b, `,"customer":"customer-`...)
	b = strconv.AppendInt(b, cust, 10)
	b = append(b, `","email":"user`...)
	b = strconv.AppendInt(b, cust, 10)
	b = append(b, `@example.com","amount":`...)
	b = strconv.AppendFloat(b, float64((h>>17)%1_000_000)/100, 'g', -1, 64)
	b = append(b, `,"currency":"`...)
	b = append(b, currencies[(h>>37)%uint64(len(currencies))]...)
	b = append(b, `","status":"`...)
	b = append(b, statuses[(h>>41)%uint64(len(statuses))]...)
	b = append(b, `","created_at":`...)
	b = strconv.AppendInt(b, CreatedBase+i*37, 10)
	b = append(b, `,"note":"`...)
	w := mix64(h ^ 0x5bd1e995)
	n := 8 + int(w%6) // 8–13 words
	for j := range n {
		if j > 0 {
			b = append(b, ' ')
		}
		w = mix64(w)
		b = append(b, words[w%uint64(len(words))]...)
	}
	return append(b, `"}`...)
}

func appendPadded(b []byte, v int64, width int) []byte {
	s := strconv.FormatInt(v, 10)
	for range width - len(s) {
		b = append(b, '0')
	}
	return append(b, s...)
}

// Envelope appends record i's value to buf[:0]: the JsonConverter
// envelope, schema and payload.
func Envelope(i int64, buf []byte) []byte {
	value := append(buf[:0], `{"schema":`...)
	value = append(value, ValueSchema...)
	value = append(value, `,"payload":`...)
	value = AppendPayload(value, i)
	return append(value, '}')
}
