package broker

// AlterClientQuotas, v0-v1 (KIP-546): sets and removes client quotas
// (producer_byte_rate, consumer_byte_rate, request_percentage,
// controller_mutation_rate) of user and client-id entities, defaults
// included, in the metadata log. The controller validates as Kafka's
// ClientQuotaControlManager does (INVALID_REQUEST with Kafka's messages
// for an unknown key, a value <= 0, a fractional byte rate, an empty or
// unknown entity; Fjord has no ip quotas). validate_only answers without
// storing. A non-controller forwards the request to the active
// controller. Only the byte rates are enforced (broker/quota).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/controller"
	"github.com/fjordhq/fjord/broker/metadata"
)

func (s *Server) handleAlterClientQuotas(ctx context.Context, r *kmsg.AlterClientQuotasRequest) *kmsg.AlterClientQuotasResponse {
	c, _ := s.activeController().(controller.QuotaController)
	if c == nil {
		return quotaErrorResponse(r, kerr.NotController.Code, "no active controller")
	}
	alts := make([]controller.QuotaAlteration, len(r.Entries))
	for i, e := range r.Entries {
		for _, d := range e.Entity {
			alts[i].Entity = append(alts[i].Entity, metadata.QuotaEntityData{Type: d.Type, Name: d.Name})
		}
		for _, op := range e.Ops {
			alts[i].Ops = append(alts[i].Ops, controller.QuotaOp{Key: op.Key, Value: op.Value, Remove: op.Remove})
		}
	}
	resp := r.ResponseKind().(*kmsg.AlterClientQuotasResponse)
	for _, res := range c.AlterClientQuotas(ctx, alts, r.ValidateOnly) {
		out := kmsg.NewAlterClientQuotasResponseEntry()
		for _, d := range res.Entity {
			ed := kmsg.NewAlterClientQuotasResponseEntryEntity()
			ed.Type, ed.Name = d.Type, d.Name
			out.Entity = append(out.Entity, ed)
		}
		if res.Err != nil {
			out.ErrorCode, out.ErrorMessage = res.Err.Code.Code, &res.Err.Message
		} else if !r.ValidateOnly {
			s.log.Info("altered client quotas", "entity", entityLogString(res.Entity))
		}
		resp.Entries = append(resp.Entries, out)
	}
	return resp
}

func entityLogString(data []metadata.QuotaEntityData) string {
	out := ""
	for _, d := range data {
		if out != "" {
			out += ","
		}
		name := "<default>"
		if d.Name != nil {
			name = *d.Name
		}
		out += d.Type + "=" + name
	}
	return out
}

// quotaErrorResponse answers every entry of an AlterClientQuotas request
// with code (see adminErrorResponse).
func quotaErrorResponse(r *kmsg.AlterClientQuotasRequest, code int16, msg string) *kmsg.AlterClientQuotasResponse {
	resp := r.ResponseKind().(*kmsg.AlterClientQuotasResponse)
	for _, e := range r.Entries {
		out := kmsg.NewAlterClientQuotasResponseEntry()
		for _, d := range e.Entity {
			ed := kmsg.NewAlterClientQuotasResponseEntryEntity()
			ed.Type, ed.Name = d.Type, d.Name
			out.Entity = append(out.Entity, ed)
		}
		out.ErrorCode, out.ErrorMessage = code, &msg
		resp.Entries = append(resp.Entries, out)
	}
	return resp
}
