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
	blocks [][]T // oldest first; only the last is ever short of queueBlockRows
	n      int
	// next is the capacity of the next block begun after a batch took
	// the whole queue: the size of that batch, so a steady rate fills
	// one block a batch without growing it.
	next int
}

// queueBlockRows is a block's size: a batch's, refusalRowsPerTxLimit.
const queueBlockRows = refusalRowsPerTxLimit

// minQueueBlock is the smallest block begun, for a quiet log.
const minQueueBlock = 16

func (q *rowQueue[T]) len() int { return q.n }

// push appends r.
func (q *rowQueue[T]) push(r T) {
	last := len(q.blocks) - 1
	if last < 0 || len(q.blocks[last]) == queueBlockRows {
		size := queueBlockRows // after a full block: the rows come fast
		if last < 0 {
			size = min(max(q.next, minQueueBlock), queueBlockRows)
		}
		q.blocks = append(q.blocks, make([]T, 0, size))
		last++
	}
	q.blocks[last] = append(q.blocks[last], r)
	q.n++
}

// take removes the oldest block, at most queueBlockRows rows in order,
// and returns it; the queue keeps no reference to it. It returns nil
// when the queue is empty.
func (q *rowQueue[T]) take() []T {
	if q.n == 0 {
		return nil
	}
	b := q.blocks[0]
	q.blocks[0] = nil
	q.blocks = q.blocks[1:]
	if len(q.blocks) == 0 {
		q.blocks, q.next = nil, len(b)
	}
	q.n -= len(b)
	return b[:len(b):len(b)]
}

// all returns every queued row, oldest first, in a slice of its own.
func (q *rowQueue[T]) all() []T {
	if q.n == 0 {
		return nil
	}
	rows := make([]T, 0, q.n)
	for _, b := range q.blocks {
		rows = append(rows, b...)
	}
	return rows
}

// reset empties the queue.
func (q *rowQueue[T]) reset() { q.blocks, q.n = nil, 0 }
