package deploy

import (
	"fmt"
	"maps"
	"slices"
)

// A small schema of the Kubernetes fields the manifests use: no kubectl
// or API server here to reject a misspelt field (the API server's
// strict validation would; kubectl kustomize does not), so each object's
// keys are checked against the fields Kubernetes defines for it. Only the
// fields these manifests need are listed: a field added to a manifest
// that is not here fails the test until it is added (with its spelling
// checked against the API reference).

// sch describes an object: each key's schema is leaf (a scalar or a list
// of scalars), free (a map of any keys: labels, data), an object (sch),
// or a list of objects (listOf).
type sch map[string]any

type leafT struct{}
type freeT struct{}
type listOf struct{ item sch }

var (
	leaf = leafT{}
	free = freeT{}
)

var k8sMetadata = sch{"name": leaf, "labels": free, "annotations": free}

var k8sLabelSelector = sch{"matchLabels": free}

var k8sProbe = sch{
	"httpGet":             sch{"path": leaf, "port": leaf, "scheme": leaf},
	"tcpSocket":           sch{"port": leaf},
	"initialDelaySeconds": leaf, "periodSeconds": leaf, "timeoutSeconds": leaf,
	"failureThreshold": leaf, "successThreshold": leaf,
}

var k8sSecurityContext = sch{
	"allowPrivilegeEscalation": leaf, "readOnlyRootFilesystem": leaf, "runAsNonRoot": leaf,
	"runAsUser": leaf, "runAsGroup": leaf, "capabilities": sch{"drop": leaf, "add": leaf},
	"seccompProfile": sch{"type": leaf},
}

var k8sContainer = sch{
	"name": leaf, "image": leaf, "imagePullPolicy": leaf, "command": leaf, "args": leaf,
	"env": listOf{sch{"name": leaf, "value": leaf, "valueFrom": sch{
		"fieldRef":         sch{"fieldPath": leaf},
		"secretKeyRef":     sch{"name": leaf, "key": leaf},
		"resourceFieldRef": sch{"resource": leaf, "divisor": leaf},
	}}},
	"ports":           listOf{sch{"name": leaf, "containerPort": leaf, "protocol": leaf}},
	"startupProbe":    k8sProbe,
	"livenessProbe":   k8sProbe,
	"readinessProbe":  k8sProbe,
	"resources":       sch{"requests": free, "limits": free},
	"securityContext": k8sSecurityContext,
	"volumeMounts":    listOf{sch{"name": leaf, "mountPath": leaf, "readOnly": leaf, "subPath": leaf}},
}

var k8sPodTemplate = sch{
	"metadata": k8sMetadata,
	"spec": sch{
		"terminationGracePeriodSeconds": leaf,
		"securityContext": sch{"runAsNonRoot": leaf, "runAsUser": leaf, "runAsGroup": leaf, "fsGroup": leaf,
			"seccompProfile": sch{"type": leaf}},
		"affinity": sch{"podAntiAffinity": sch{"preferredDuringSchedulingIgnoredDuringExecution": listOf{sch{
			"weight": leaf, "podAffinityTerm": sch{"topologyKey": leaf, "labelSelector": k8sLabelSelector},
		}}}},
		"initContainers": listOf{k8sContainer},
		"containers":     listOf{k8sContainer},
		"volumes": listOf{sch{"name": leaf, "configMap": sch{"name": leaf}, "secret": sch{"secretName": leaf},
			"emptyDir": free}},
	},
}

var k8sKinds = map[string]sch{
	"ConfigMap": {"data": free},
	"Secret":    {"type": leaf, "stringData": free, "data": free},
	"Service": {"spec": sch{
		"type": leaf, "clusterIP": leaf, "publishNotReadyAddresses": leaf, "selector": free,
		"ports": listOf{sch{"name": leaf, "port": leaf, "targetPort": leaf, "protocol": leaf}},
	}},
	"StatefulSet": {"spec": sch{
		"serviceName": leaf, "replicas": leaf, "podManagementPolicy": leaf,
		"updateStrategy": sch{"type": leaf}, "selector": k8sLabelSelector, "template": k8sPodTemplate,
		"volumeClaimTemplates": listOf{sch{"metadata": k8sMetadata, "spec": sch{
			"accessModes": leaf, "storageClassName": leaf, "resources": sch{"requests": free},
		}}},
	}},
	"Deployment": {"spec": sch{
		"replicas": leaf, "selector": k8sLabelSelector, "template": k8sPodTemplate,
		"strategy": sch{"type": leaf, "rollingUpdate": sch{"maxUnavailable": leaf, "maxSurge": leaf}},
	}},
	"PodDisruptionBudget": {"spec": sch{"maxUnavailable": leaf, "minAvailable": leaf, "selector": k8sLabelSelector}},
}

// k8sFieldProblems reports every key of a manifest that its kind's schema
// does not have, by path.
func k8sFieldProblems(doc map[string]any) []string {
	kind, _ := doc["kind"].(string)
	s, ok := k8sKinds[kind]
	if !ok {
		return []string{fmt.Sprintf("kind %q is not one these tests know", kind)}
	}
	top := sch{"apiVersion": leaf, "kind": leaf, "metadata": k8sMetadata}
	maps.Copy(top, s)
	return fieldProblems(kind, doc, top)
}

func fieldProblems(at string, v any, s sch) []string {
	obj, ok := v.(map[string]any)
	if !ok {
		return []string{fmt.Sprintf("%s: want an object, got %T", at, v)}
	}
	var problems []string
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		where := at + "." + k
		want, ok := s[k]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: not a field of this object (a typo?)", where))
			continue
		}
		switch w := want.(type) {
		case sch:
			problems = append(problems, fieldProblems(where, obj[k], w)...)
		case listOf:
			items, ok := obj[k].([]any)
			if !ok {
				problems = append(problems, fmt.Sprintf("%s: want a list", where))
				continue
			}
			for i, it := range items {
				problems = append(problems, fieldProblems(fmt.Sprintf("%s[%d]", where, i), it, w.item)...)
			}
		case freeT:
			if _, ok := obj[k].(map[string]any); !ok && obj[k] != nil {
				problems = append(problems, fmt.Sprintf("%s: want a map", where))
			}
		case leafT:
			if _, ok := obj[k].(map[string]any); ok {
				problems = append(problems, fmt.Sprintf("%s: want a value, got an object", where))
			}
		}
	}
	return problems
}
