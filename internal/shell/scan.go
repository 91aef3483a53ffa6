package shell

// ReadAt returns up to n bytes of the stream from off, as far as it has been written, and
// whether they could be had: from memory, else from the spill file. Bytes neither holds
// (a spill file that could not be written, or was capped) are not to be had.
func (o *Output) ReadAt(off int64, n int) ([]byte, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	n = int(min(int64(n), o.total-off))
	if off < 0 || n <= 0 {
		return nil, n == 0
	}
	b, ok := o.readAt(off, n)
	if !ok {
		return nil, false
	}
	return append([]byte(nil), b...), true
}
