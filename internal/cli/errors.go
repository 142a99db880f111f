package cli

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
)

// brokerErr joins a Kafka error with the broker's free-text message, which
// often names the exact problem ("Number of partitions must be larger than
// 0"), and keeps the Kafka error for errors.Is.
func brokerErr(err error, message string) error {
	if err == nil {
		return nil
	}
	if message == "" || message == err.Error() {
		return err
	}
	var ke *kerr.Error
	if errors.As(err, &ke) && (message == ke.Description || message == ke.Message) {
		return err
	}
	return fmt.Errorf("%w (%s)", err, message)
}

// topicErr says what to do next for the errors people hit on a topic.
func topicErr(topic string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, kerr.UnknownTopicOrPartition), errors.Is(err, kerr.UnknownTopicID):
		return fmt.Errorf("topic %s does not exist: create it with `fjord topic create %s`: %w", topic, topic, err)
	case errors.Is(err, kerr.TopicAlreadyExists):
		return fmt.Errorf("topic %s already exists: pass --if-not-exists to ignore that, or change it with `fjord topic alter %s`: %w", topic, topic, err)
	case errors.Is(err, kerr.InvalidReplicationFactor):
		return fmt.Errorf("topic %s: the replication factor cannot exceed the number of live brokers (lower --replication-factor, or add brokers): %w", topic, err)
	case errors.Is(err, kerr.InvalidConfig):
		return fmt.Errorf("topic %s: a config key or value was refused; check its name and value against Kafka's topic configs: %w", topic, err)
	case errors.Is(err, kerr.TopicDeletionDisabled):
		return fmt.Errorf("topic %s: the broker refuses deletes: set delete.topic.enable=true on it: %w", topic, err)
	case errors.Is(err, kerr.TopicAuthorizationFailed):
		return fmt.Errorf("topic %s: not authorized: check the principal configured in --command-config: %w", topic, err)
	}
	return fmt.Errorf("topic %s: %w", topic, err)
}

// groupErr says what to do next for the errors people hit on a group.
func groupErr(group string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, kerr.GroupIDNotFound):
		return fmt.Errorf("group %s does not exist: list groups with `fjord group list`: %w", group, err)
	case errors.Is(err, kerr.NonEmptyGroup):
		return fmt.Errorf("group %s still has active members: stop its consumers, then retry: %w", group, err)
	case errors.Is(err, kerr.GroupAuthorizationFailed):
		return fmt.Errorf("group %s: not authorized: check the principal configured in --command-config: %w", group, err)
	case errors.Is(err, kerr.CoordinatorNotAvailable), errors.Is(err, kerr.CoordinatorLoadInProgress):
		return fmt.Errorf("group %s: its coordinator is not ready yet; retry in a few seconds: %w", group, err)
	}
	return fmt.Errorf("group %s: %w", group, err)
}
