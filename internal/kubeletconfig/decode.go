package kubeletconfig

import (
	"bytes"
	"fmt"
	"strings"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// decode reads a KubeletConfiguration from YAML or JSON as OpenShift does: leniently, so unknown
// fields are dropped and keys match case-insensitively (see unknownFields for telling the admin).
func decode(data []byte) (*kubeletv1beta1.KubeletConfiguration, error) {
	cfg := &kubeletv1beta1.KubeletConfiguration{}
	if err := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), len(data)).Decode(cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

// UnknownFields lists what the lenient decode drops from spec.kubeletConfig or matches only
// case-insensitively, e.g. a misspelt "maxpod". OpenShift accepts such a KubeletConfig, and so
// do we, but the admin should hear of it.
func UnknownFields(kc *mcfgv1.KubeletConfig) []string {
	if kc.Spec.KubeletConfig == nil || kc.Spec.KubeletConfig.Raw == nil {
		return nil
	}
	js, err := yaml.YAMLToJSON(kc.Spec.KubeletConfig.Raw)
	if err != nil {
		return nil
	}
	var cfg kubeletv1beta1.KubeletConfiguration
	strictErrs, err := sigsjson.UnmarshalStrict(js, &cfg)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range strictErrs {
		out = append(out, strings.TrimPrefix(e.Error(), "json: "))
	}
	return out
}

// kubeletConfEncoder encodes kubelet.conf exactly as OpenShift's kubelet config controller
// does: the apimachinery YAML serializer for kubelet.config.k8s.io/v1beta1 (JSON field names,
// keys sorted by sigs.k8s.io/yaml, apiVersion and kind set by the codec).
var kubeletConfEncoder = newEncoder()

func newEncoder() runtime.Encoder {
	scheme := runtime.NewScheme()
	if err := kubeletv1beta1.AddToScheme(scheme); err != nil {
		panic(err)
	}
	codecs := serializer.NewCodecFactory(scheme)
	info, ok := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), runtime.ContentTypeYAML)
	if !ok {
		panic("no YAML serializer")
	}
	return codecs.EncoderForVersion(info.Serializer, kubeletv1beta1.SchemeGroupVersion)
}

func encode(cfg *kubeletv1beta1.KubeletConfiguration) ([]byte, error) {
	data, err := runtime.Encode(kubeletConfEncoder, cfg)
	if err != nil {
		return nil, fmt.Errorf("encoding kubelet.conf: %w", err)
	}
	return data, nil
}
