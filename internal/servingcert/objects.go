package servingcert

// Keys, labels and annotations of the three objects the core decides.
const (
	// LabelManaged marks the objects mco created and may change; an object without it is the
	// admin's (value ignored).
	LabelManaged = "machineconfiguration.openshift.io/managed-serving-certificate"
	// AnnotationPublished on the bundle: JSON object from each CA's SHA-256 fingerprint (hex,
	// of the DER) to when the bundle first held it (RFC 3339).
	AnnotationPublished = "machineconfiguration.openshift.io/ca-bundle-published"
	// annotationCertManager is set by cert-manager on the Secrets it writes.
	annotationCertManager = "cert-manager.io/certificate-name"

	// The CA Secret: the signing CA, a new CA waiting for the overlap, and old CAs kept in the
	// bundle until they expire (certificates only).
	KeyCACert        = "ca.crt"
	KeyCAKey         = "ca.key"
	KeyNextCACert    = "next-ca.crt"
	KeyNextCAKey     = "next-ca.key"
	KeyRetiredCACert = "retired-ca.crt"

	// The serving Secret (type kubernetes.io/tls): the certificate followed by its CA, its key,
	// and the whole trusted bundle.
	KeyTLSCert = "tls.crt"
	KeyTLSKey  = "tls.key"
	KeyTLSCA   = "ca.crt"

	// KeyBundle is the bundle ConfigMap's key, the one --server-ca reads by default.
	KeyBundle = "ca-bundle.crt"
)

// Object is one stored object as read: whether it exists, its labels, annotations and data
// (a ConfigMap's string data as bytes).
type Object struct {
	Exists      bool
	Labels      map[string]string
	Annotations map[string]string
	Data        map[string][]byte
}

// managed reports whether mco may change the object: it carries LabelManaged and cert-manager
// did not write it (cert-manager keeps a label it finds, and two writers would fight).
func (o Object) managed() bool {
	_, labelled := o.Labels[LabelManaged]
	_, certManager := o.Annotations[annotationCertManager]
	return labelled && !certManager
}

// Which names one of the three objects.
type Which int

const (
	CASecret Which = iota
	ServingSecret
	BundleConfigMap
)

func (w Which) String() string {
	return [...]string{"CA Secret", "serving Secret", "bundle ConfigMap"}[w]
}
