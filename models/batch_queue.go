package models

// rowQueue is a BatchWriter's in-memory queue: rows in blocks of at most
// queueBlockRows, the most one batch takes, so that the writer takes a
// batch as a whole block and a Write never copies the rows queued before
// it.
//
// It was one slice, appended to and cut from the front. Every time it
// grew, append copied every queued row (432 bytes each) to a new array,
// and at 2,000 rows a batch a Write cost 3.3 µs and 2.2 KB of garbage;
// with the writer behind, a long queue was copied again and again, 7%
// of the serving process's CPU in the load test on PostgreSQL, the
// moment CPU was scarcest (BenchmarkWriteWhileBehind).
type rowQueue[T any] struct {
	blocks []queueBlock[T] // oldest first; only the last is ever short of queueBlockRows
	n      int
	bytes  int64 // the rows' sizes as Write estimated them (prepareRow)
	// next is the capacity of the next block begun after a batch took
	// the whole queue: the size of that batch, so a steady rate fills
	// one block a batch without growing it.
	next int
}

// queueBlock is a block of rows and their estimated size, so that a
// batch leaves the queue with its bytes without its rows being sized
// again.
type queueBlock[T any] struct {
	rows  []T
	bytes int64
}

// queueBlockRows is a block's size: a batch's, refusalRowsPerTxLimit.
const queueBlockRows = refusalRowsPerTxLimit

// minQueueBlock is the smallest block begun, for a quiet log.
const minQueueBlock = 16

func (q *rowQueue[T]) len() int { return q.n }

// push appends r, of size bytes.
func (q *rowQueue[T]) push(r T, size int64) {
	last := len(q.blocks) - 1
	if last < 0 || len(q.blocks[last].rows) == queueBlockRows {
		capacity := queueBlockRows // after a full block: the rows come fast
		if last < 0 {
			capacity = min(max(q.next, minQueueBlock), queueBlockRows)
		}
		q.blocks = append(q.blocks, queueBlock[T]{rows: make([]T, 0, capacity)})
		last++
	}
	b := &q.blocks[last]
	b.rows = append(b.rows, r)
	b.bytes += size
	q.n++
	q.bytes += size
}

// take removes the oldest block, at most queueBlockRows rows in order,
// and returns it; the queue keeps no reference to it. It returns nil
// when the queue is empty.
func (q *rowQueue[T]) take() []T {
	if q.n == 0 {
		return nil
	}
	b := q.blocks[0]
	q.blocks[0] = queueBlock[T]{}
	q.blocks = q.blocks[1:]
	if len(q.blocks) == 0 {
		q.blocks, q.next = nil, len(b.rows)
	}
	q.n -= len(b.rows)
	q.bytes -= b.bytes
	return b.rows[:len(b.rows):len(b.rows)]
}

// all returns every queued row, oldest first, in a slice of its own.
func (q *rowQueue[T]) all() []T {
	if q.n == 0 {
		return nil
	}
	rows := make([]T, 0, q.n)
	for _, b := range q.blocks {
		rows = append(rows, b.rows...)
	}
	return rows
}

// rowBlocks is every queued row, oldest first, as the blocks hold them
// (for spilling the queue without copying it).
func (q *rowQueue[T]) rowBlocks() [][]T {
	out := make([][]T, len(q.blocks))
	for i, b := range q.blocks {
		out[i] = b.rows
	}
	return out
}

// reset empties the queue.
func (q *rowQueue[T]) reset() { q.blocks, q.n, q.bytes = nil, 0, 0 }
