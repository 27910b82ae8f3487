package parquetio

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/herdsweep/herdsweep/dataset"
)

// arrowType is the Arrow type of a dataset column type.
func arrowType(t dataset.Type) arrow.DataType {
	switch t {
	case dataset.Int64:
		return arrow.PrimitiveTypes.Int64
	case dataset.Float64:
		return arrow.PrimitiveTypes.Float64
	case dataset.Utf8:
		return arrow.BinaryTypes.String
	case dataset.Bool:
		return arrow.FixedWidthTypes.Boolean
	}
	panic(fmt.Sprintf("parquetio: column type %q", t))
}

// datasetType is the dataset column type of an Arrow type (arrowType's
// inverse).
func datasetType(t arrow.DataType) dataset.Type {
	for _, d := range []dataset.Type{dataset.Int64, dataset.Float64, dataset.Utf8, dataset.Bool} {
		if arrow.TypeEqual(arrowType(d), t) {
			return d
		}
	}
	panic(fmt.Sprintf("parquetio: column type %s", t))
}

// arrowFields is the Arrow schema's fields of a table's columns: the
// dataset package owns the columns, this package only spells them.
func arrowFields(fs []dataset.Field) []arrow.Field {
	out := make([]arrow.Field, len(fs))
	for i, f := range fs {
		out[i] = arrow.Field{Name: f.Name, Type: arrowType(f.Type), Nullable: f.Nullable}
	}
	return out
}

func runsFields() []arrow.Field     { return arrowFields(dataset.RunsFields()) }
func timelineFields() []arrow.Field { return arrowFields(dataset.TimelineFields()) }
func groupsFields() []arrow.Field   { return arrowFields(dataset.GroupsFields()) }

// fileMetadata is a file's key-value metadata: m, for the given schema.
func fileMetadata(m dataset.Meta, schema string) arrow.Metadata {
	return arrow.NewMetadata(m.KeyValues(schema))
}
