package ident

// ParseTarget is parseTarget, for the differential test.
var ParseTarget = parseTarget
