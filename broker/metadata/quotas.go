package metadata

// Client quotas in the metadata log: Kafka's ClientQuotaRecord (KIP-546).
// An entity is a user, a client id, or both; each part either names one
// user/client or is the default (Kafka's null entity name). A record sets
// or removes one key (producer_byte_rate, consumer_byte_rate,
// request_percentage, controller_mutation_rate) of one entity. The image
// keeps them so every broker enforces the same quotas.

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Kafka's ClientQuotaEntity type names.
const (
	QuotaEntityUser     = "user"
	QuotaEntityClientID = "client-id"
	QuotaEntityIP       = "ip"
)

// QuotaPart is one part of a quota entity.
type QuotaPart uint8

const (
	// QuotaAbsent: the entity has no such part.
	QuotaAbsent QuotaPart = iota
	// QuotaDefault: the part is the default (null name): every user or
	// client id without a quota of its own.
	QuotaDefault
	// QuotaNamed: the part names one user or client id.
	QuotaNamed
)

// QuotaEntity names a client quota entity. It is comparable (a map key).
type QuotaEntity struct {
	User, Client         QuotaPart
	UserName, ClientName string // set when the part is QuotaNamed
}

// String is the entity as Kafka's ClientQuotaEntity prints it in error
// messages: ClientQuotaEntity(entries={user=alice, client-id=null}).
func (e QuotaEntity) String() string {
	var parts []string
	name := func(p QuotaPart, n string) string {
		if p == QuotaDefault {
			return "null"
		}
		return n
	}
	if e.User != QuotaAbsent {
		parts = append(parts, QuotaEntityUser+"="+name(e.User, e.UserName))
	}
	if e.Client != QuotaAbsent {
		parts = append(parts, QuotaEntityClientID+"="+name(e.Client, e.ClientName))
	}
	return "ClientQuotaEntity(entries={" + strings.Join(parts, ", ") + "})"
}

// QuotaEntityData is one (type, name) pair of a record's entity; a nil
// name is the default.
type QuotaEntityData struct {
	Type string  `json:"entityType"`
	Name *string `json:"entityName"`
}

// ClientQuotaRecord is Kafka's ClientQuotaRecord: set key to value for
// the entity, or remove the key.
type ClientQuotaRecord struct {
	Entity []QuotaEntityData `json:"entity"`
	Key    string            `json:"key"`
	Value  float64           `json:"value"`
	Remove bool              `json:"remove"`
}

// EntityData is e as record entity data (user first, as Kafka lists it).
func (e QuotaEntity) EntityData() []QuotaEntityData {
	var out []QuotaEntityData
	part := func(typ string, p QuotaPart, n string) {
		switch p {
		case QuotaDefault:
			out = append(out, QuotaEntityData{Type: typ})
		case QuotaNamed:
			name := n
			out = append(out, QuotaEntityData{Type: typ, Name: &name})
		}
	}
	part(QuotaEntityUser, e.User, e.UserName)
	part(QuotaEntityClientID, e.Client, e.ClientName)
	return out
}

// QuotaEntityFromData builds an entity from (type, name) pairs. Only the
// user and client-id types are known; a type named twice or another type
// is an error.
func QuotaEntityFromData(data []QuotaEntityData) (QuotaEntity, error) {
	var e QuotaEntity
	for _, d := range data {
		p, n := QuotaDefault, ""
		if d.Name != nil {
			p, n = QuotaNamed, *d.Name
		}
		switch d.Type {
		case QuotaEntityUser:
			if e.User != QuotaAbsent {
				return e, fmt.Errorf("duplicate entity entry %s", d.Type)
			}
			e.User, e.UserName = p, n
		case QuotaEntityClientID:
			if e.Client != QuotaAbsent {
				return e, fmt.Errorf("duplicate entity entry %s", d.Type)
			}
			e.Client, e.ClientName = p, n
		default:
			return e, fmt.Errorf("unhandled client quota entity type %q", d.Type)
		}
	}
	return e, nil
}

// ClientQuotas is the image's quota state. It is never modified once in
// an image: a quota record makes a new one, so a broker can tell that
// quotas changed by comparing pointers.
type ClientQuotas struct {
	Entities map[QuotaEntity]map[string]float64
}

// QuotaEntitiesSorted returns the entities with quotas in a stable
// order: users before client ids, defaults before names.
func (q *ClientQuotas) QuotaEntitiesSorted() []QuotaEntity {
	if q == nil {
		return nil
	}
	return slices.SortedFunc(maps.Keys(q.Entities), func(a, b QuotaEntity) int {
		return cmp.Or(cmp.Compare(a.User, b.User), cmp.Compare(a.UserName, b.UserName),
			cmp.Compare(a.Client, b.Client), cmp.Compare(a.ClientName, b.ClientName))
	})
}

// Quotas returns an entity's quota keys and values (nil: none).
func (q *ClientQuotas) Quotas(e QuotaEntity) map[string]float64 {
	if q == nil {
		return nil
	}
	return q.Entities[e]
}

// applyClientQuota applies a ClientQuotaRecord, copying the state.
func (img *Image) applyClientQuota(r *ClientQuotaRecord) error {
	e, err := QuotaEntityFromData(r.Entity)
	if err != nil {
		return fmt.Errorf("client quota record: %w", err)
	}
	n := &ClientQuotas{Entities: map[QuotaEntity]map[string]float64{}}
	if img.ClientQuotas != nil {
		maps.Copy(n.Entities, img.ClientQuotas.Entities)
	}
	keys := maps.Clone(n.Entities[e])
	if keys == nil {
		keys = map[string]float64{}
	}
	if r.Remove {
		delete(keys, r.Key)
	} else {
		keys[r.Key] = r.Value
	}
	if len(keys) == 0 {
		delete(n.Entities, e)
	} else {
		n.Entities[e] = keys
	}
	if len(n.Entities) == 0 {
		n = nil
	}
	img.ClientQuotas = n
	return nil
}

// QuotaRecords returns the records that rebuild img's client quotas
// from empty (for snapshots).
func (img *Image) QuotaRecords() []Record {
	var recs []Record
	for _, e := range img.ClientQuotas.QuotaEntitiesSorted() {
		keys := img.ClientQuotas.Entities[e]
		for _, k := range slices.Sorted(maps.Keys(keys)) {
			recs = append(recs, Record{ClientQuota: &ClientQuotaRecord{Entity: e.EntityData(), Key: k, Value: keys[k]}})
		}
	}
	return recs
}
