package controller

// Client quotas, as Kafka's ClientQuotaControlManager (KIP-546):
// AlterClientQuotas is validated against the image, turned into
// ClientQuotaRecords, and committed atomically (every valid entity's
// records, or none), through the Local journal or the raft quorum alike.

import (
	"context"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/fjordhq/fjord/broker/metadata"
)

// QuotaController is the part of a controller that stores client quotas;
// Local and Quorum implement it.
type QuotaController interface {
	AlterClientQuotas(ctx context.Context, alts []QuotaAlteration, validateOnly bool) []QuotaResult
}

var (
	_ QuotaController = (*Local)(nil)
	_ QuotaController = (*Quorum)(nil)
)

// QuotaAlteration is one entry of an AlterClientQuotas request.
type QuotaAlteration struct {
	Entity []metadata.QuotaEntityData
	Ops    []QuotaOp
}

// QuotaOp sets Key to Value, or removes Key.
type QuotaOp struct {
	Key    string
	Value  float64
	Remove bool
}

// QuotaResult is the answer for one entity (named as the request named
// it the first time).
type QuotaResult struct {
	Entity []metadata.QuotaEntityData
	Err    *Error
}

// The client quota keys Kafka accepts for user and client-id entities
// (QuotaConfig.userAndClientQuotaConfigs): the byte rates are LONGs, the
// others DOUBLEs.
const (
	QuotaProducerByteRate       = "producer_byte_rate"
	QuotaConsumerByteRate       = "consumer_byte_rate"
	QuotaRequestPercentage      = "request_percentage"
	QuotaControllerMutationRate = "controller_mutation_rate"
)

var quotaKeyIsLong = map[string]bool{
	QuotaProducerByteRate:       true,
	QuotaConsumerByteRate:       true,
	QuotaRequestPercentage:      false,
	QuotaControllerMutationRate: false,
}

// entityKey identifies an entity as Kafka's ClientQuotaEntity map does:
// the order of the parts does not matter; a type named twice keeps its
// last name (the map's put).
func entityKey(data []metadata.QuotaEntityData) string {
	m := map[string]string{}
	for _, d := range data {
		v := "\x00" // null: the default
		if d.Name != nil {
			v = "=" + *d.Name
		}
		m[d.Type] = v
	}
	var parts []string
	for _, t := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, t+m[t])
	}
	return strings.Join(parts, "\x01")
}

// planAlterClientQuotas is ClientQuotaControlManager.alterClientQuotas.
// An entity named twice is answered once, with "Ignoring duplicate
// entity" (a duplicate key within an entry ends the same way, as in
// Kafka, where the later message replaces the first).
func planAlterClientQuotas(img *metadata.Image, alts []QuotaAlteration) ([]QuotaResult, []metadata.Record) {
	var results []QuotaResult
	index := map[string]int{} // entity key -> results index
	var recs []metadata.Record
	for _, alt := range alts {
		key := entityKey(alt.Entity)
		i, seen := index[key]
		if !seen {
			i = len(results)
			index[key] = i
			results = append(results, QuotaResult{Entity: alt.Entity})
		}
		values := map[string]*float64{}
		var dupKey *Error
		for _, op := range alt.Ops {
			if _, ok := values[op.Key]; ok {
				dupKey = errorf(kerr.InvalidRequest, "Duplicate quota key %s not updating quota for this entity %s", op.Key, entityString(alt.Entity))
				continue
			}
			if op.Remove {
				values[op.Key] = nil
			} else {
				v := op.Value
				values[op.Key] = &v
			}
		}
		if seen || dupKey != nil {
			results[i].Err = errorf(kerr.InvalidRequest, "Ignoring duplicate entity %s", entityString(alt.Entity))
			continue
		}
		entity, e := validateQuotaEntity(alt.Entity)
		if e != nil {
			results[i].Err = e
			continue
		}
		current := img.ClientQuotas.Quotas(entity)
		var entityRecs []metadata.Record
		// Keys in the order the request named them, so records (and the
		// first validation error) are deterministic.
		var order []string
		for _, op := range alt.Ops {
			if !slices.Contains(order, op.Key) {
				order = append(order, op.Key)
			}
		}
		for _, k := range order {
			v := values[k]
			if v == nil {
				if _, ok := current[k]; ok {
					entityRecs = append(entityRecs, metadata.Record{ClientQuota: &metadata.ClientQuotaRecord{
						Entity: entity.EntityData(), Key: k, Remove: true}})
				}
				continue
			}
			if e := validateQuotaKeyValue(k, *v); e != nil {
				results[i].Err = e
				entityRecs = nil
				break
			}
			if cur, ok := current[k]; !ok || cur != *v {
				entityRecs = append(entityRecs, metadata.Record{ClientQuota: &metadata.ClientQuotaRecord{
					Entity: entity.EntityData(), Key: k, Value: *v}})
			}
		}
		if results[i].Err == nil {
			recs = append(recs, entityRecs...)
		}
	}
	return results, recs
}

// entityString prints request entity data as Kafka's ClientQuotaEntity.
func entityString(data []metadata.QuotaEntityData) string {
	parts := make([]string, 0, len(data))
	for _, d := range data {
		n := "null"
		if d.Name != nil {
			n = *d.Name
		}
		parts = append(parts, d.Type+"="+n)
	}
	return "ClientQuotaEntity(entries={" + strings.Join(parts, ", ") + "})"
}

// validateQuotaEntity is ClientQuotaControlManager.validateEntity and
// configKeysForEntityType. Fjord has no IP quotas (connection_creation_rate):
// an ip entity is INVALID_REQUEST.
func validateQuotaEntity(data []metadata.QuotaEntityData) (metadata.QuotaEntity, *Error) {
	if len(data) == 0 {
		return metadata.QuotaEntity{}, errorf(kerr.InvalidRequest, "Invalid empty client quota entity")
	}
	seen := map[string]bool{}
	hasIP, hasOther := false, false
	for _, d := range data {
		if seen[d.Type] {
			return metadata.QuotaEntity{}, errorf(kerr.InvalidRequest, "Invalid client quota entity, duplicate entity entry %s", d.Type)
		}
		seen[d.Type] = true
		switch d.Type {
		case metadata.QuotaEntityUser, metadata.QuotaEntityClientID:
			hasOther = true
		case metadata.QuotaEntityIP:
			hasIP = true
		default:
			return metadata.QuotaEntity{}, errorf(kerr.InvalidRequest, "Unhandled client quota entity type: %s", d.Type)
		}
		if d.Name != nil && *d.Name == "" {
			return metadata.QuotaEntity{}, errorf(kerr.InvalidRequest, "Empty %s not supported", d.Type)
		}
	}
	if hasIP {
		if hasOther {
			// Kafka's message, missing space included.
			return metadata.QuotaEntity{}, errorf(kerr.InvalidRequest, "Invalid quota entity combination, IP entity should"+
				"not be combined with User or ClientId")
		}
		return metadata.QuotaEntity{}, errorf(kerr.InvalidRequest, "IP quotas (connection_creation_rate) are not supported by Fjord; set quotas on users or client ids")
	}
	e, err := metadata.QuotaEntityFromData(data)
	if err != nil {
		return e, errorf(kerr.InvalidRequest, "Invalid client quota entity: %v", err)
	}
	return e, nil
}

// validateQuotaKeyValue is ClientQuotaControlManager.validateQuotaKeyValue.
func validateQuotaKeyValue(key string, v float64) *Error {
	isLong, ok := quotaKeyIsLong[key]
	if !ok {
		return errorf(kerr.InvalidRequest, "Invalid configuration key %s", key)
	}
	if v <= 0 {
		return errorf(kerr.InvalidRequest, "Quota %s must be greater than 0", key)
	}
	if !isLong {
		return nil
	}
	if v > math.MaxInt64 {
		return errorf(kerr.InvalidRequest, "Proposed value for %s is too large for a LONG.", key)
	}
	if math.Abs(math.Mod(v, 1.0)) > 1e-6 {
		return errorf(kerr.InvalidRequest, "%s cannot be a fractional value.", key)
	}
	return nil
}

// AlterClientQuotas sets and removes client quotas; with validateOnly it
// answers without storing anything.
func (c *Local) AlterClientQuotas(ctx context.Context, alts []QuotaAlteration, validateOnly bool) []QuotaResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	results, recs := planAlterClientQuotas(c.image.Load(), alts)
	if len(recs) > 0 && !validateOnly {
		if err := c.commit(recs); err != nil {
			failQuotas(results, asError(err, kerr.UnknownServerError))
		}
	}
	return results
}

// AlterClientQuotas sets and removes client quotas through raft.
func (q *Quorum) AlterClientQuotas(ctx context.Context, alts []QuotaAlteration, validateOnly bool) []QuotaResult {
	if err := q.lockActive(); err != nil {
		var results []QuotaResult
		seen := map[string]bool{}
		for _, a := range alts {
			if k := entityKey(a.Entity); !seen[k] {
				seen[k] = true
				results = append(results, QuotaResult{Entity: a.Entity, Err: err})
			}
		}
		return results
	}
	defer q.mu.Unlock()
	results, recs := planAlterClientQuotas(q.Image(), alts)
	if validateOnly {
		return results
	}
	if err := q.propose(recs); err != nil {
		failQuotas(results, err)
	}
	return results
}

// failQuotas turns every success into err: the records were not stored.
func failQuotas(results []QuotaResult, err *Error) {
	for i := range results {
		if results[i].Err == nil {
			results[i].Err = err
		}
	}
}
