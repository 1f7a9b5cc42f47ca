package a2s

// Bunzip2 exports the bzip2 decoder to the external tests.
var Bunzip2 = bunzip2
