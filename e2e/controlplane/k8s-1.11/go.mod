// kube-apiserver v1.11.10 (OpenShift 3.11's Kubernetes) for the e2e version axis.
// Not built in this directory: build-v1.11.sh copies this go.mod and go.sum into the
// extracted k8s.io/kubernetes@v1.11.10 source tree (whose module zip has no go.mod and no
// vendor/), so the relative replace paths below are relative to that tree.
// Versions: /work/shared/reference/k8s-1.11/modules-1.11.10.txt (Godeps' commits, or the
// nearest version the module proxy serves).
module k8s.io/kubernetes

go 1.16

require (
	bitbucket.org/ww/goautoneg v0.0.0-20120707110453-a547fc61f48d
	cloud.google.com/go v0.0.0-20160913182117-3b1ae45394a2
	github.com/Azure/azure-sdk-for-go v16.2.1+incompatible
	github.com/Azure/go-autorest v10.6.2+incompatible
	github.com/NYTimes/gziphandler v0.0.0-20170623195520-56545f4a5d46
	github.com/PuerkitoBio/purell v1.0.0
	github.com/PuerkitoBio/urlesc v0.0.0-20160726150825-5bd2802263f2
	github.com/asaskevich/govalidator v0.0.0-20180319081651-7d2e70ef918f
	github.com/aws/aws-sdk-go v1.12.7
	github.com/beorn7/perks v0.0.0-20160229213445-3ac7bf7a47d1
	github.com/cockroachdb/cmux v0.1.3
	github.com/coreos/bbolt v1.3.1-coreos.6
	github.com/coreos/etcd v3.2.13+incompatible
	github.com/coreos/go-oidc v0.0.0-20180117170138-065b426bd416
	github.com/coreos/go-semver v0.0.0-20150304020126-568e959cd898
	github.com/coreos/go-systemd v0.0.0-20161114122254-48702e0da86b
	github.com/coreos/pkg v0.0.0-20160620232715-fa29b1d70f0b
	github.com/d2g/dhcp4 v0.0.0-20170904100407-a1d1b6c41b1c
	github.com/d2g/dhcp4client v0.0.0-20170829104524-6e570ed0a266
	github.com/davecgh/go-spew v0.0.0-20170626231645-782f4967f2dc
	github.com/dgrijalva/jwt-go v0.0.0-20160705203006-01aeca54ebda
	github.com/docker/distribution v0.0.0-20170726174610-edc3ab29cdff
	github.com/docker/docker v0.0.0-20170731201938-4f3616fb1c11
	github.com/docker/go-connections v0.3.0
	github.com/docker/go-units v0.0.0-20170127094116-9e638d38cf69
	github.com/docker/spdystream v0.0.0-20160310174837-449fdfce4d96
	github.com/elazarl/go-bindata-assetfs v0.0.0-20150624150248-3dcc96556217
	github.com/emicklei/go-restful v0.0.0-20170410110728-ff4f55a20633
	github.com/emicklei/go-restful-swagger12 v0.0.0-20170208215640-dcef7f557305
	github.com/evanphx/json-patch v0.0.0-20190203023257-5858425f7550
	github.com/fatih/camelcase v0.0.0-20160318181535-f6a740d52f96
	github.com/ghodss/yaml v1.0.0
	github.com/go-ini/ini v1.25.4
	github.com/go-openapi/analysis v0.0.0-20180825180245-b006789cd277
	github.com/go-openapi/errors v0.0.0-20160704190347-d24ebc2075ba
	github.com/go-openapi/jsonpointer v0.0.0-20160704185906-46af16f9f7b1
	github.com/go-openapi/jsonreference v0.0.0-20160704190145-13c6e3589ad9
	github.com/go-openapi/loads v0.0.0-20170520182102-a80dea3052f0
	github.com/go-openapi/runtime v0.0.0-20180920151709-4f900dc2ade9
	github.com/go-openapi/spec v0.0.0-20180213232550-1de3e0542de6
	github.com/go-openapi/strfmt v0.0.0-20160812050534-d65c7fdb29ec
	github.com/go-openapi/swag v0.0.0-20170606142751-f3f9494671f9
	github.com/go-openapi/validate v0.0.0-20171117174350-d509235108fc
	github.com/gogo/protobuf v0.0.0-20170330071051-c0656edd0d9e
	github.com/golang/glog v0.0.0-20141105023935-44145f04b68c
	github.com/golang/groupcache v0.0.0-20160516000752-02826c3e7903
	github.com/golang/protobuf v1.1.0
	github.com/google/btree v0.0.0-20160524151835-7d79101e329e
	github.com/google/gofuzz v0.0.0-20161122191042-44d81051d367
	github.com/googleapis/gnostic v0.0.0-20170729233727-0c5108395e2d
	github.com/gophercloud/gophercloud v0.0.0-20180330165814-781450b3c4fc
	github.com/gregjones/httpcache v0.0.0-20170728041850-787624de3eb7
	github.com/grpc-ecosystem/go-grpc-prometheus v1.2.0
	github.com/grpc-ecosystem/grpc-gateway v1.3.0
	github.com/hashicorp/golang-lru v0.0.0-20160207214719-a0d98a5f2880
	github.com/imdario/mergo v0.3.5
	github.com/jmespath/go-jmespath v0.0.0-20180206201540-c2b33e8439af
	github.com/jonboulle/clockwork v0.0.0-20141017032234-72f9bd7c4e0c
	github.com/json-iterator/go v0.0.0-20180612202835-f2b4162afba3
	github.com/kardianos/osext v0.0.0-20150410034420-8fef92e41e22
	github.com/mailru/easyjson v0.0.0-20170624190925-2f5df55504eb
	github.com/marstr/guid v1.1.0
	github.com/matttproud/golang_protobuf_extensions v1.0.1
	github.com/mitchellh/mapstructure v0.0.0-20170307201123-53818660ed49
	github.com/modern-go/concurrent v0.0.0-20180306012644-bacd9c7ef1dd
	github.com/modern-go/reflect2 v1.0.2
	github.com/mxk/go-flowrate v0.0.0-20140419014527-cca7078d478f
	github.com/opencontainers/go-digest v0.0.0-20170106003457-a6d0ee40d420
	github.com/opencontainers/image-spec v0.0.0-20170604055404-372ad780f634
	github.com/pborman/uuid v0.0.0-20150603214016-ca53cad383ca
	github.com/peterbourgon/diskv v2.0.1+incompatible
	github.com/pquerna/cachecontrol v0.0.0-20180517163645-1555304b9b35
	github.com/prometheus/client_golang v0.0.0-20170531130054-e7e903064f5e
	github.com/prometheus/client_model v0.0.0-20150212101744-fa8ad6fec335
	github.com/prometheus/common v0.0.0-20170427095455-13ba4ddd0caa
	github.com/prometheus/procfs v0.0.0-20170519190837-65c1f6f8f0fc
	github.com/robfig/cron v0.0.0-20170309132418-df38d32658d8
	github.com/rubiojr/go-vhd v0.0.0-20160810183302-0bfd3b39853c
	github.com/satori/go.uuid v1.1.0
	github.com/spf13/cobra v0.0.0-20180319062004-c439c4fa0937
	github.com/spf13/pflag v1.0.1
	github.com/ugorji/go v0.0.0-20170107133203-ded73eae5db7
	github.com/vmware/govmomi v0.17.1
	github.com/vmware/photon-controller-go-sdk v0.0.0-20170310013346-4a435daef6cc
	github.com/xanzy/go-cloudstack v0.0.0-20160728180336-1e2cbf647e57
	github.com/xiang90/probing v0.0.0-20160813154853-07dd2e8dfe18
	golang.org/x/crypto v0.0.0-20180222182404-49796115aa4b
	golang.org/x/net v0.0.0-20180611182652-db08ff08e862
	golang.org/x/oauth2 v0.0.0-20170412232759-a6bd8cefa181
	golang.org/x/sys v0.0.0-20171031081856-95c657629925
	golang.org/x/text v0.0.0-20170810154203-b19bf474d317
	golang.org/x/time v0.0.0-20161028155119-f51c12702a4d
	golang.org/x/tools v0.0.0-20170428054726-2382e3994d48
	google.golang.org/api v0.0.0-20180603000442-8e296ef26005
	google.golang.org/genproto v0.0.0-20180621235812-80063a038e33
	google.golang.org/grpc v1.7.5
	gopkg.in/gcfg.v1 v1.2.0
	gopkg.in/inf.v0 v0.9.0
	gopkg.in/natefinch/lumberjack.v2 v2.0.0-20150622162204-20b71e5b60d7
	gopkg.in/square/go-jose.v2 v2.1.3
	gopkg.in/warnings.v0 v0.1.1
	gopkg.in/yaml.v2 v2.0.0-20170721113624-670d4cfef054
	k8s.io/gengo v0.0.0-20190128074634-0689ccc1d7d6
	k8s.io/klog v0.2.0
	k8s.io/kube-openapi v0.0.0-20180620173706-91cfa479c814
	k8s.io/utils v0.0.0-20180208044234-258e2a2fa645
	k8s.io/api v0.0.0
	k8s.io/apiextensions-apiserver v0.0.0
	k8s.io/apimachinery v0.0.0
	k8s.io/apiserver v0.0.0
	k8s.io/client-go v0.0.0
	k8s.io/code-generator v0.0.0
	k8s.io/kube-aggregator v0.0.0
	k8s.io/metrics v0.0.0
	k8s.io/sample-apiserver v0.0.0
	k8s.io/sample-controller v0.0.0
)

replace (
	// The staging repositories are published from this tree (vendor/ symlinks upstream).
	k8s.io/api => ./staging/src/k8s.io/api
	k8s.io/apiextensions-apiserver => ./staging/src/k8s.io/apiextensions-apiserver
	k8s.io/apimachinery => ./staging/src/k8s.io/apimachinery
	k8s.io/apiserver => ./staging/src/k8s.io/apiserver
	k8s.io/client-go => ./staging/src/k8s.io/client-go
	k8s.io/code-generator => ./staging/src/k8s.io/code-generator
	k8s.io/kube-aggregator => ./staging/src/k8s.io/kube-aggregator
	k8s.io/metrics => ./staging/src/k8s.io/metrics
	k8s.io/sample-apiserver => ./staging/src/k8s.io/sample-apiserver
	k8s.io/sample-controller => ./staging/src/k8s.io/sample-controller
	// Not served by the proxy: same code under other module paths.
	bitbucket.org/ww/goautoneg => github.com/munnerz/goautoneg v0.0.0-20120707110453-a547fc61f48d
	github.com/cockroachdb/cmux => github.com/soheilhy/cmux v0.1.3
	// Patched copy (build-v1.11.sh): a duplicate symbol in a base64 alphabet panics at init
	// under Go >= 1.22.
	github.com/ugorji/go => ./_patched/ugorji-go
)
