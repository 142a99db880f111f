package metadata

import (
	"testing"
)

func TestClientQuotaRecords(t *testing.T) {
	alice := "alice"
	recs := []Record{
		{ClientQuota: &ClientQuotaRecord{Entity: []QuotaEntityData{{Type: "user", Name: &alice}}, Key: "producer_byte_rate", Value: 1024}},
		{ClientQuota: &ClientQuotaRecord{Entity: []QuotaEntityData{{Type: "user", Name: &alice}}, Key: "consumer_byte_rate", Value: 2048}},
		{ClientQuota: &ClientQuotaRecord{Entity: []QuotaEntityData{{Type: "user"}, {Type: "client-id"}}, Key: "request_percentage", Value: 50}},
		{ClientQuota: &ClientQuotaRecord{Entity: []QuotaEntityData{{Type: "user", Name: &alice}}, Key: "consumer_byte_rate", Remove: true}},
	}
	img, err := Empty().Apply(0, recs)
	if err != nil {
		t.Fatal(err)
	}
	q := img.ClientQuotas
	ua := QuotaEntity{User: QuotaNamed, UserName: "alice"}
	dd := QuotaEntity{User: QuotaDefault, Client: QuotaDefault}
	if len(q.Entities) != 2 || q.Quotas(ua)["producer_byte_rate"] != 1024 || len(q.Quotas(ua)) != 1 || q.Quotas(dd)["request_percentage"] != 50 {
		t.Fatalf("image quotas %+v", q.Entities)
	}
	if s := dd.String(); s != "ClientQuotaEntity(entries={user=null, client-id=null})" {
		t.Errorf("String %q", s)
	}
	// Other records keep the quota state (same pointer); quota records
	// replace it and leave the older image's alone.
	next, err := img.Apply(10, []Record{{ProducerIDs: &ProducerIDsRecord{NextProducerID: 5}}})
	if err != nil || next.ClientQuotas != q {
		t.Fatalf("a non-quota record changed the quota state: %v", err)
	}
	rm, err := img.Apply(10, []Record{{ClientQuota: &ClientQuotaRecord{Entity: []QuotaEntityData{{Type: "user", Name: &alice}}, Key: "producer_byte_rate", Remove: true}}})
	if err != nil || rm.ClientQuotas == q || len(rm.ClientQuotas.Entities) != 1 || len(q.Entities) != 2 {
		t.Fatalf("remove: %v %+v (old %+v)", err, rm.ClientQuotas, q.Entities)
	}
	// The snapshot records rebuild the same state.
	again, err := Empty().Apply(0, img.QuotaRecords())
	if err != nil {
		t.Fatal(err)
	}
	if len(again.ClientQuotas.Entities) != 2 || again.ClientQuotas.Quotas(ua)["producer_byte_rate"] != 1024 || again.ClientQuotas.Quotas(dd)["request_percentage"] != 50 {
		t.Fatalf("rebuilt %+v", again.ClientQuotas.Entities)
	}
	// Removing the last key of the last entity leaves no state at all.
	empty, err := rm.Apply(20, []Record{{ClientQuota: &ClientQuotaRecord{Entity: []QuotaEntityData{{Type: "user"}, {Type: "client-id"}}, Key: "request_percentage", Remove: true}}})
	if err != nil || empty.ClientQuotas != nil {
		t.Fatalf("all removed: %v %+v", err, empty.ClientQuotas)
	}
	if _, err := Empty().Apply(0, []Record{{ClientQuota: &ClientQuotaRecord{Entity: []QuotaEntityData{{Type: "ip"}}, Key: "k", Value: 1}}}); err == nil {
		t.Fatal("an ip entity record applied")
	}
}
