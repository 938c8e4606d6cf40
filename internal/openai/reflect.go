package openai

import "reflect"

func reflectTypeOf[T any]() reflect.Type { return reflect.TypeFor[T]() }
