"""Planning: shadow mode, capacity, replay, what-if and the operations board that shows them."""
