package broker

// DescribeUserScramCredentials, v0, answered from this broker's metadata
// image as Kafka's ScramImage.describe does: mechanisms and iterations
// only, never salts or keys; no users named means every user; an unknown
// user is RESOURCE_NOT_FOUND, a user named twice DUPLICATE_RESOURCE.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (s *Server) handleDescribeUserSCRAMCredentials(r *kmsg.DescribeUserSCRAMCredentialsRequest) *kmsg.DescribeUserSCRAMCredentialsResponse {
	resp := r.ResponseKind().(*kmsg.DescribeUserSCRAMCredentialsResponse)
	resp.ErrorMessage = ptr("") // Kafka's default for a success, here and per user
	img := s.image()
	var users []string
	dup := map[string]bool{}
	if len(r.Users) == 0 {
		users = img.ScramUsers()
	} else {
		seen := map[string]bool{}
		for _, u := range r.Users {
			if seen[u.Name] {
				dup[u.Name] = true
				continue
			}
			seen[u.Name] = true
			users = append(users, u.Name)
		}
	}
	for _, user := range users {
		res := kmsg.NewDescribeUserSCRAMCredentialsResponseResult()
		res.User = user
		res.ErrorMessage = ptr("")
		creds := img.ScramCredentials(user)
		switch {
		case dup[user]:
			res.ErrorCode = kerr.DuplicateResource.Code
			res.ErrorMessage = ptr("Cannot describe SCRAM credentials for the same user twice in a single request: " + user)
		case len(creds) == 0:
			res.ErrorCode = kerr.ResourceNotFound.Code
			res.ErrorMessage = ptr("Attempt to describe a user credential that does not exist: " + user)
		default:
			for _, c := range creds {
				ci := kmsg.NewDescribeUserSCRAMCredentialsResponseResultCredentialInfo()
				ci.Mechanism, ci.Iterations = int8(c.Mechanism), c.Iterations
				res.CredentialInfos = append(res.CredentialInfos, ci)
			}
		}
		resp.Results = append(resp.Results, res)
	}
	return resp
}
