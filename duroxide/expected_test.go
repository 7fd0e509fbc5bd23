package duroxide

// Hand-written Go values for every fixture case. Round-tripping alone would not notice
// a field written under the wrong key and read back from the same wrong key; comparing
// the decoded value with these literals does.

const (
	stockMsg       = "insufficient stock for sku A-100"
	activityInput  = `{"sku":"A-100","qty":2}`
	poisonActivity = `{"ActivityExecute":{"instance":"order-1","execution_id":1,"id":2,"name":"ReserveInventory","input":"{\"sku\":\"A-100\",\"qty\":2}"}}`
	poisonStart    = `[{"StartOrchestration":{"instance":"order-1","orchestration":"ProcessOrder","input":"{\"customer_id\":\"c1\"}","version":null,"parent_instance":null,"parent_id":null,"execution_id":1}}]`
	futureKindErr  = "unknown variant `FutureEventKind`, expected one of `OrchestrationStarted`, `OrchestrationCompleted` at line 1 column 150"
	hello          = `{"text":"Hello"}`
	world          = `{"text":"World"}`
)

var (
	appOrchFailed = ErrorDetails{Application: &ApplicationError{
		Kind: AppErrorKind{Variant: AppErrorOrchestrationFailed}, Message: "payment declined"}}
	appCancelled = ErrorDetails{Application: &ApplicationError{
		Kind: AppErrorKind{Variant: AppErrorCancelled, Reason: "user requested"}}}
	infraLocked = ErrorDetails{Infrastructure: &InfrastructureError{
		Operation: "ack_orchestration_item", Message: "database is locked", Retryable: true}}
	poisonOfActivity = ErrorDetails{Poison: &PoisonError{AttemptCount: 11, MaxAttempts: 10,
		MessageType: PoisonMessageType{Activity: &PoisonActivity{
			Instance: "order-1", ExecutionID: 1, ActivityName: "ReserveInventory", ActivityID: 2}},
		Message: poisonActivity}}
	poisonOfDeserialization = ErrorDetails{Poison: &PoisonError{AttemptCount: 11, MaxAttempts: 10,
		MessageType: PoisonMessageType{FailedDeserialization: &PoisonFailedDeserialization{
			Instance: "order-1", ExecutionID: 1, Error: futureKindErr}},
		Message: futureKindErr}}
)

var expectedWorkItems = map[string]WorkItem{
	"StartOrchestration_top_level": StartOrchestration{Instance: "order-1", Orchestration: "ProcessOrder",
		Input: `{"customer_id":"c1"}`, ExecutionID: 1},
	"StartOrchestration_with_version": StartOrchestration{Instance: "order-2", Orchestration: "ProcessOrder",
		Input: `{"customer_id":"c2"}`, Version: ptr("1.0.0"), ExecutionID: 1},
	"StartOrchestration_sub_orchestration": StartOrchestration{Instance: "order-1::sub::5",
		Orchestration: "ChargePayment", Input: `{"amount":99.99}`, Version: ptr("1.0.0"),
		ParentInstance: ptr("order-1"), ParentID: ptr(uint64(5)), ExecutionID: 1},
	"ActivityExecute_minimal": ActivityExecute{Instance: "order-1", ExecutionID: 1, ID: 2,
		Name: "ReserveInventory", Input: activityInput},
	"ActivityExecute_with_session_id": ActivityExecute{Instance: "order-1", ExecutionID: 1, ID: 3,
		Name: "ChatTurn", Input: "hello", SessionID: ptr("session-42")},
	"ActivityExecute_with_tag": ActivityExecute{Instance: "order-1", ExecutionID: 1, ID: 4,
		Name: "RenderFrame", Input: "frame1", Tag: ptr("gpu")},
	"ActivityExecute_with_session_id_and_tag": ActivityExecute{Instance: "order-1", ExecutionID: 1, ID: 5,
		Name: "RenderFrame", Input: "frame2", SessionID: ptr("session-42"), Tag: ptr("gpu")},
	"ActivityCompleted": ActivityCompleted{Instance: "order-1", ExecutionID: 1, ID: 2, Result: `{"reserved":true}`},
	"ActivityFailed_application": ActivityFailed{Instance: "order-1", ExecutionID: 1, ID: 2,
		Details: ApplicationFailure(stockMsg)},
	"ActivityFailed_poison": ActivityFailed{Instance: "order-1", ExecutionID: 1, ID: 2, Details: poisonOfActivity},
	"TimerFired":            TimerFired{Instance: "order-1", ExecutionID: 1, ID: 6, FireAtMs: 1700000030000},
	"ExternalRaised":        ExternalRaised{Instance: "order-1", Name: "PaymentReceived", Data: `{"amount":99.99}`},
	"SubOrchCompleted": SubOrchCompleted{ParentInstance: "order-1", ParentExecutionID: 1, ParentID: 5,
		Result: `{"charged":true}`},
	"SubOrchFailed": SubOrchFailed{ParentInstance: "order-1", ParentExecutionID: 1, ParentID: 5,
		Details: appOrchFailed},
	"CancelInstance": CancelInstance{Instance: "order-1", Reason: "user requested"},
	"ContinueAsNew_minimal": ContinueAsNew{Instance: "order-1", Orchestration: "ProcessOrder",
		Input: `{"iteration":2}`},
	"ContinueAsNew_with_carry_forward_events": ContinueAsNew{Instance: "order-1", Orchestration: "ProcessOrder",
		Input: `{"iteration":2}`, Version: ptr("1.0.0"),
		CarryForwardEvents: [][2]string{{"inbox", hello}, {"inbox", world}}},
	"ContinueAsNew_with_initial_custom_status": ContinueAsNew{Instance: "order-1", Orchestration: "ProcessOrder",
		Input: `{"iteration":2}`, Version: ptr("1.0.0"), InitialCustomStatus: ptr(`{"progress":50}`)},
	"ContinueAsNew_full": ContinueAsNew{Instance: "order-1", Orchestration: "ProcessOrder",
		Input: `{"iteration":3}`, Version: ptr("1.0.0"), CarryForwardEvents: [][2]string{{"inbox", hello}},
		InitialCustomStatus: ptr("step-3")},
	"QueueMessage": QueueMessage{Instance: "order-1", Name: "inbox", Data: hello},
}

var expectedErrorDetails = map[string]ErrorDetails{
	"Infrastructure_retryable": infraLocked,
	"Infrastructure_not_retryable": {Infrastructure: &InfrastructureError{Operation: "quiescence_loop",
		Message: "quiescence loop exceeded iteration limit"}},
	"Configuration_Nondeterminism_with_message": {Configuration: &ConfigurationError{
		Kind: ConfigErrorNondeterminism, Resource: "",
		Message: ptr("history expected ActivityScheduled 'ReserveInventory' but orchestration scheduled 'ChargePayment'")}},
	"Configuration_Nondeterminism_message_null": {Configuration: &ConfigurationError{
		Kind: ConfigErrorNondeterminism, Resource: "ProcessOrder"}},
	"Application_ActivityFailed":      ApplicationFailure(stockMsg),
	"Application_OrchestrationFailed": appOrchFailed,
	"Application_Panicked": {Application: &ApplicationError{Kind: AppErrorKind{Variant: AppErrorPanicked},
		Message: "index out of bounds: the len is 0 but the index is 0"}},
	"Application_Cancelled": appCancelled,
	"Application_ActivityFailed_retryable_true": {Application: &ApplicationError{
		Kind: AppErrorKind{Variant: AppErrorActivityFailed}, Message: "upstream timeout", Retryable: true}},
	"Poison_Orchestration": {Poison: &PoisonError{AttemptCount: 11, MaxAttempts: 10,
		MessageType: PoisonMessageType{Orchestration: &PoisonOrchestration{Instance: "order-1", ExecutionID: 1}},
		Message:     poisonStart}},
	"Poison_Activity":              poisonOfActivity,
	"Poison_FailedDeserialization": poisonOfDeserialization,
}

// ev builds an event as the fixtures write it (duroxide 0.1.26, instance order-1 unless
// given otherwise through withInstance).
func ev(id uint64, source *uint64, execution, ts uint64, kind EventKind) Event {
	return Event{EventID: id, SourceEventID: source, InstanceID: "order-1", ExecutionID: execution,
		TimestampMs: ts, DuroxideVersion: "0.1.26", Kind: kind}
}

func withInstance(e Event, instance string) Event {
	e.InstanceID = instance
	return e
}

var expectedEvents = map[string]Event{
	"OrchestrationStarted_minimal": ev(1, nil, 1, 1700000000000, OrchestrationStartedEvent{
		Name: "ProcessOrder", Version: "1.0.0", Input: `{"customer_id":"c1"}`}),
	"OrchestrationStarted_child": withInstance(ev(1, nil, 1, 1700000000005, OrchestrationStartedEvent{
		Name: "ChargePayment", Version: "1.0.0", Input: `{"amount":99.99}`,
		ParentInstance: ptr("order-1"), ParentID: ptr(uint64(5))}), "order-1::sub::5"),
	"OrchestrationStarted_continue_as_new_full": ev(1, nil, 2, 1700000000100, OrchestrationStartedEvent{
		Name: "ProcessOrder", Version: "1.0.0", Input: `{"iteration":2}`,
		CarryForwardEvents:  &[][2]string{{"inbox", hello}, {"inbox", world}},
		InitialCustomStatus: ptr(`{"progress":50}`)}),
	"OrchestrationStarted_carry_forward_events_empty_list": ev(1, nil, 2, 1700000000100, OrchestrationStartedEvent{
		Name: "ProcessOrder", Version: "1.0.0", Input: `{"iteration":2}`, CarryForwardEvents: new([][2]string)}),
	"OrchestrationCompleted":          ev(20, nil, 1, 1700000000090, OrchestrationCompletedEvent{Output: `{"status":"shipped"}`}),
	"OrchestrationFailed_application": ev(20, nil, 1, 1700000000090, OrchestrationFailedEvent{Details: appOrchFailed}),
	"OrchestrationFailed_cancelled":   ev(21, nil, 1, 1700000000091, OrchestrationFailedEvent{Details: appCancelled}),
	"OrchestrationFailed_poison_failed_deserialization": ev(99999, nil, 1, 1700000000092,
		OrchestrationFailedEvent{Details: poisonOfDeserialization}),
	"ActivityScheduled_minimal": ev(2, nil, 1, 1700000000001, ActivityScheduledEvent{
		Name: "ReserveInventory", Input: activityInput}),
	"ActivityScheduled_with_session_id": ev(3, nil, 1, 1700000000001, ActivityScheduledEvent{
		Name: "ChatTurn", Input: "hello", SessionID: ptr("session-42")}),
	"ActivityScheduled_with_tag": ev(4, nil, 1, 1700000000001, ActivityScheduledEvent{
		Name: "RenderFrame", Input: "frame1", Tag: ptr("gpu")}),
	"ActivityScheduled_with_session_id_and_tag": ev(5, nil, 1, 1700000000001, ActivityScheduledEvent{
		Name: "RenderFrame", Input: "frame2", SessionID: ptr("session-42"), Tag: ptr("gpu")}),
	"ActivityCompleted": ev(7, ptr(uint64(2)), 1, 1700000000010, ActivityCompletedEvent{Result: `{"reserved":true}`}),
	"ActivityFailed": ev(7, ptr(uint64(2)), 1, 1700000000010, ActivityFailedEvent{
		Details: ApplicationFailure(stockMsg)}),
	"ActivityFailed_infrastructure": ev(7, ptr(uint64(2)), 1, 1700000000010, ActivityFailedEvent{Details: infraLocked}),
	"ActivityCancelRequested": ev(8, ptr(uint64(4)), 1, 1700000000011,
		ActivityCancelRequestedEvent{Reason: "dropped_future"}),
	"TimerCreated":       ev(6, nil, 1, 1700000000002, TimerCreatedEvent{FireAtMs: 1700000030000}),
	"TimerFired":         ev(9, ptr(uint64(6)), 1, 1700000030000, TimerFiredEvent{FireAtMs: 1700000030000}),
	"ExternalSubscribed": ev(10, nil, 1, 1700000030001, ExternalSubscribedEvent{Name: "PaymentReceived"}),
	"ExternalEvent": ev(11, nil, 1, 1700000030500, ExternalEventEvent{
		Name: "PaymentReceived", Data: `{"amount":99.99}`}),
	"OrchestrationChained": ev(12, nil, 1, 1700000030501, OrchestrationChainedEvent{
		Name: "SendReceipt", Instance: "receipt-order-1", Input: `{"email":"a@example.com"}`}),
	"SubOrchestrationScheduled": ev(5, nil, 1, 1700000000003, SubOrchestrationScheduledEvent{
		Name: "ChargePayment", Instance: "sub::5", Input: `{"amount":99.99}`}),
	"SubOrchestrationCompleted": ev(13, ptr(uint64(5)), 1, 1700000031000,
		SubOrchestrationCompletedEvent{Result: `{"charged":true}`}),
	"SubOrchestrationFailed": ev(13, ptr(uint64(5)), 1, 1700000031000,
		SubOrchestrationFailedEvent{Details: appOrchFailed}),
	"SubOrchestrationCancelRequested": ev(14, ptr(uint64(5)), 1, 1700000031001,
		SubOrchestrationCancelRequestedEvent{Reason: "dropped_future"}),
	"OrchestrationContinuedAsNew": ev(15, nil, 1, 1700000031002,
		OrchestrationContinuedAsNewEvent{Input: `{"iteration":2}`}),
	"OrchestrationCancelRequested": ev(16, nil, 1, 1700000031003,
		OrchestrationCancelRequestedEvent{Reason: "user requested"}),
	"ExternalSubscribedCancelled": ev(17, ptr(uint64(10)), 1, 1700000031004,
		ExternalSubscribedCancelledEvent{Reason: "dropped_future"}),
	"QueueSubscribed":     ev(18, nil, 1, 1700000031005, QueueSubscribedEvent{Name: "inbox"}),
	"QueueEventDelivered": ev(19, nil, 1, 1700000031006, QueueEventDeliveredEvent{Name: "inbox", Data: hello}),
	"QueueSubscriptionCancelled": ev(20, ptr(uint64(18)), 1, 1700000031007,
		QueueSubscriptionCancelledEvent{Reason: "dropped_future"}),
	"CustomStatusUpdated_set": ev(21, nil, 1, 1700000031008,
		CustomStatusUpdatedEvent{Status: ptr(`{"progress":50}`)}),
	"CustomStatusUpdated_cleared_null": ev(22, nil, 1, 1700000031009, CustomStatusUpdatedEvent{}),
	"KeyValueSet": ev(23, nil, 1, 1700000031010, KeyValueSetEvent{
		Key: "cart_total", Value: "99.99", LastUpdatedAtMs: 1700000031010}),
	"KeyValueCleared":  ev(24, nil, 1, 1700000031011, KeyValueClearedEvent{Key: "cart_total"}),
	"KeyValuesCleared": ev(25, nil, 1, 1700000031012, KeyValuesClearedEvent{}),
}
