# The two commands of the README: `make demo` and `make test`. Both install what they need.
.PHONY: demo test build unit e2e clean
demo:
	bash scripts/demo.sh
test:
	bash scripts/test.sh
build:
	bash scripts/setup.sh && cmake -S . -B build -G Ninja && cmake --build build
unit: build
	ctest --test-dir build -LE 'e2e|node' --output-on-failure
e2e: build
	ctest --test-dir build -L e2e --output-on-failure
clean:
	rm -rf build build-asan build-tsan
