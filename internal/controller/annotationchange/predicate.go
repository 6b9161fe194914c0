// Package annotationchange wakes a controller when one of the annotations it decides by
// changes: an update that changes an annotation changes neither an object's generation nor
// its labels, so controller-runtime's predicates for those let it pass unseen.
package annotationchange

import (
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// Predicate passes updates that change any of keys' values (set, changed or removed), and
// nothing else: creations and deletions are for the controller's other predicates.
func Predicate(keys ...string) predicate.Funcs {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			if e.ObjectOld == nil || e.ObjectNew == nil {
				return false
			}
			for _, k := range keys {
				if e.ObjectOld.GetAnnotations()[k] != e.ObjectNew.GetAnnotations()[k] {
					return true
				}
			}
			return false
		},
		CreateFunc:  func(event.CreateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}
