package sim

// Field names a parameter as a FieldError reports it: the Go name of a
// field of Scenario or Policy, or one of the few values that are not a
// field (Window, the time after recovery; a fleet's Share, Groups and
// Mix). Those who say sim's errors in their own words (sweeps.toml's keys,
// a command's flags) key their words by these values, never by strings (a Field
// is no string: a word typed by hand does not compile), so that a field
// renamed here cannot leave a hand-kept map behind (TestFieldsNameTheirFields
// holds each to its field).
type Field struct{ name string }

// String is the field's Go name, as an error prints it.
func (f Field) String() string { return f.name }

// The scenario's fields.
var (
	FieldClients           = Field{"Clients"}
	FieldTick              = Field{"Tick"}
	FieldRecoverAt         = Field{"RecoverAt"}
	FieldCapacity          = Field{"Capacity"}
	FieldSpread            = Field{"Spread"}
	FieldHorizon           = Field{"Horizon"}
	FieldRetryAfter        = Field{"RetryAfter"}
	FieldRetryAfterMax     = Field{"RetryAfterMax"}
	FieldRetryAfterBacklog = Field{"RetryAfterBacklog"}
	FieldRampUp            = Field{"RampUp"}
	FieldRampFrom          = Field{"RampFrom"}
	FieldRejectCost        = Field{"RejectCost"}
	FieldConcurrency       = Field{"Concurrency"}
	FieldService           = Field{"Service"}
	FieldServiceTime       = Field{"ServiceTime"}
	FieldServiceP99        = Field{"ServiceP99"}
	FieldQueueLimit        = Field{"QueueLimit"}
	FieldQueueWait         = Field{"QueueWait"}
	FieldShedTarget        = Field{"ShedTarget"}
	FieldTimeout           = Field{"Timeout"}
	FieldArrivalRate       = Field{"ArrivalRate"}
	FieldArrivalCurve      = Field{"ArrivalCurve"}
	FieldArrivalClock      = Field{"ArrivalClock"}
	FieldOutageStart       = Field{"OutageStart"}
	FieldLimiter           = Field{"Limiter"}
	FieldLimitInitial      = Field{"LimitInitial"}
	FieldLimitMin          = Field{"LimitMin"}
	FieldLimitMax          = Field{"LimitMax"}
	FieldLimitBackoff      = Field{"LimitBackoff"}
	FieldLimitTimeout      = Field{"LimitTimeout"}
	FieldLimitSmoothing    = Field{"LimitSmoothing"}
	FieldQueueOrder        = Field{"QueueOrder"}
	FieldFailShare         = Field{"FailShare"}
	FieldFailCurve         = Field{"FailCurve"}
	FieldAddedLatency      = Field{"AddedLatency"}

	// FieldWindow is Horizon − RecoverAt, the time clients have after
	// recovery: Scenario.Validate names it where a user sets that time.
	FieldWindow = Field{"Window"}
)

// The policy's fields.
var (
	FieldKind                 = Field{"Kind"}
	FieldBase                 = Field{"Base"}
	FieldCap                  = Field{"Cap"}
	FieldMultiplier           = Field{"Multiplier"}
	FieldWidth                = Field{"Width"}
	FieldMaxAttempts          = Field{"MaxAttempts"}
	FieldHonorRetryAfter      = Field{"HonorRetryAfter"}
	FieldRetryOn              = Field{"RetryOn"}
	FieldMaxElapsed           = Field{"MaxElapsed"}
	FieldBucketTokens         = Field{"BucketTokens"}
	FieldBucketCost           = Field{"BucketCost"}
	FieldRetryBudget          = Field{"RetryBudget"}
	FieldBudgetMinRPS         = Field{"BudgetMinRPS"}
	FieldClientsPerProcess    = Field{"ClientsPerProcess"}
	FieldThrottleK            = Field{"ThrottleK"}
	FieldThrottleWindow       = Field{"ThrottleWindow"}
	FieldAWSAdaptive          = Field{"AWSAdaptive"}
	FieldRetryTokens          = Field{"RetryTokens"}
	FieldRetryTokenRatio      = Field{"RetryTokenRatio"}
	FieldPushback             = Field{"Pushback"}
	FieldRetryCap             = Field{"RetryCap"}
	FieldBreakerRatio         = Field{"BreakerRatio"}
	FieldBreakerMinThroughput = Field{"BreakerMinThroughput"}
	FieldBreakerWindow        = Field{"BreakerWindow"}
	FieldBreakerBreak         = Field{"BreakerBreak"}
	FieldPreset               = Field{"Preset"}
)

// A mixed fleet's (ValidateFleet): a group's share, the number of groups,
// and a policy a mixed fleet cannot hold.
var (
	FieldShare  = Field{"Share"}
	FieldGroups = Field{"Groups"}
	FieldMix    = Field{"Mix"}
)

// A chain's (ValidateChain): its front services, the fan-out of the
// deepest service and that service's failure share.
var (
	FieldLayers = Field{"Layers"}
	FieldFanout = Field{"Fanout"}
)

// Fields lists sim's fields, in the order above.
func Fields() []Field {
	return []Field{
		FieldClients, FieldTick, FieldRecoverAt, FieldCapacity, FieldSpread, FieldHorizon, FieldRetryAfter,
		FieldRetryAfterMax, FieldRetryAfterBacklog, FieldRampUp, FieldRampFrom, FieldRejectCost, FieldConcurrency,
		FieldService, FieldServiceTime, FieldServiceP99, FieldQueueLimit, FieldQueueWait, FieldShedTarget,
		FieldTimeout, FieldArrivalRate, FieldArrivalCurve, FieldArrivalClock, FieldOutageStart, FieldFailShare,
		FieldFailCurve, FieldAddedLatency, FieldWindow,
		FieldLimiter, FieldLimitInitial, FieldLimitMin, FieldLimitMax, FieldLimitBackoff, FieldLimitTimeout, FieldLimitSmoothing, FieldQueueOrder,
		FieldKind, FieldBase, FieldCap, FieldMultiplier, FieldWidth, FieldMaxAttempts, FieldHonorRetryAfter,
		FieldRetryOn, FieldMaxElapsed, FieldBucketTokens, FieldBucketCost, FieldRetryBudget, FieldBudgetMinRPS,
		FieldClientsPerProcess, FieldThrottleK, FieldThrottleWindow, FieldAWSAdaptive, FieldRetryTokens,
		FieldRetryTokenRatio, FieldPushback, FieldRetryCap, FieldBreakerRatio, FieldBreakerMinThroughput,
		FieldBreakerWindow, FieldBreakerBreak, FieldPreset, FieldShare, FieldGroups, FieldMix,
		FieldLayers, FieldFanout,
	}
}

// NewField names a field of another package's type whose errors are
// FieldErrors (live.Config's Scale, Down …): that package exports the value
// and keys its words by it, as for sim's own.
func NewField(name string) Field { return Field{name} }
