package partitioner

import (
	"sync/atomic"
	"time"

	"github.com/fjordhq/fjord/connect"
)

// timeBased is Confluent's TimeBasedPartitioner (and Hourly and Daily,
// which fix its duration and pattern): the record's time from the
// timestamp extractor, floored to the duration in the zone's local time,
// printed with path.format.
type timeBased struct {
	duration int64
	zone     *zone
	format   *pathFormat
	extract  extractor
	// last is the most recent bucket: records come in time order mostly,
	// and every record of a bucket gets its string without a zone lookup
	// or an allocation.
	last atomic.Pointer[bucket]
}

type bucket struct {
	// from and to bound the instants the zone has offset for.
	from, to, offset int64
	// local is the floored local time the bucket is named after.
	local   int64
	encoded string
}

func newTimeBased(s *settings) *timeBased {
	return &timeBased{duration: s.duration, zone: s.zone, format: s.format, extract: s.extract}
}

// Timestamp is the record's time by timestamp.extractor.
func (p *timeBased) Timestamp(r *connect.SinkRecord, now time.Time) (int64, error) {
	return p.extract.timestamp(r, now)
}

func (p *timeBased) Encode(r *connect.SinkRecord, now time.Time) (string, error) {
	ts, err := p.extract.timestamp(r, now)
	if err != nil {
		return "", err
	}
	return p.encodeTimestamp(ts)
}

// encodeTimestamp is Confluent's encodedPartitionForTimestamp with
// getPartition: the instant is moved to local time by the zone's offset
// there, floored to the duration (Java's division, toward zero), moved
// back by Joda's convertLocalToUTC and printed in the zone.
func (p *timeBased) encodeTimestamp(ts int64) (string, error) {
	if b := p.last.Load(); b != nil && ts >= b.from && ts < b.to {
		if local, err := utcToLocal(ts, b.offset); err == nil && local/p.duration*p.duration == b.local {
			return b.encoded, nil
		}
	}
	offset, from, to := p.zone.period(ts)
	local, err := utcToLocal(ts, offset)
	if err != nil {
		return "", err
	}
	floored := local / p.duration * p.duration
	utc, err := p.zone.localToUTC(floored)
	if err != nil {
		return "", err
	}
	t := time.UnixMilli(utc).In(p.zone.loc)
	b := &bucket{from: from, to: to, offset: offset, local: floored,
		encoded: string(p.format.appendTo(make([]byte, 0, 48), t, p.zone.id))}
	p.last.Store(b)
	return b.encoded, nil
}
