module example.com/perfgate-external

go 1.26.0

require github.com/perfgate/perfgate v0.0.0

require (
	github.com/dlclark/regexp2 v1.12.0 // indirect
	github.com/klauspost/compress v1.20.3 // indirect
	github.com/molecule-man/go-brrr v1.3.1 // indirect
	github.com/valyala/bytebufferpool v1.0.0 // indirect
	github.com/valyala/fasthttp v1.78.0 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
	golang.org/x/text v0.44.0 // indirect
	gonum.org/v1/gonum v0.17.0 // indirect
)

replace github.com/perfgate/perfgate => ../..
