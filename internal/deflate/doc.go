// Package deflate is a slow, thorough DEFLATE (RFC 1951) encoder with a gzip
// (RFC 1952) wrapper, written to precompress the browser module once at build
// time: it spends far more CPU than compress/flate to find a smaller encoding
// that every inflater still reads.
//
// # How a stream is made
//
// The input is cut into master chunks of ChunkSize bytes so that memory stays
// bounded. For each chunk:
//
//  1. match finding (lz77.go): hash chains over the 32 KiB window give, for
//     every position, the smallest distance at which each match length
//     3..258 is available, stored as a short staircase of (length, distance)
//     steps;
//  2. a first parse (parse.go) from a fixed-code cost model;
//  3. block splitting (split.go): the chunk's tokens are split where the sum
//     of the estimated block sizes drops, searching the split point by
//     repeated sampling;
//  4. per block, iterated optimal parsing (parse.go): a shortest path over
//     the positions, where the cost of a literal or a (length, distance) pair
//     comes from the symbol statistics of the previous pass; the smallest
//     result over Options.Iterations passes is kept;
//  5. a second split of the optimised tokens, kept only if it is smaller;
//  6. each block is written (block.go) as stored, fixed or dynamic, whichever
//     is smallest, with length-limited optimal Huffman codes (huffman.go:
//     package-merge, 15 bits, 7 for the code-length code) and run-length
//     coded code lengths (symbols 16, 17 and 18, the best combination).
//
// The output is deterministic: the same input and Options always give the
// same bytes (no map iteration, no time, the perturbation of statistics uses
// a fixed-seed generator). The gzip header carries no name and no time.
//
// Every code written is complete (the Kraft sum is exactly one) and has at
// least two symbols, because some inflaters (zlib among them) refuse
// incomplete code-length codes.
package deflate
