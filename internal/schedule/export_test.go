package schedule

// TickOf exposes tickOf to the external tests.
var TickOf = tickOf
